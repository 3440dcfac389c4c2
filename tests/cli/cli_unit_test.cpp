// Unit tests of the CLI's helpers: the rules `check` and `diff` apply, on hand-made
// reports, so they are pinned down without a recorder or a simulator.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "cli/junit_writer.h"
#include "cli/leak_gate.h"
#include "cli/preload_locator.h"
#include "cli/report_diff.h"
#include "cli/size_parse.h"
#include "cli/stack_text.h"
#include "cli/suppressions.h"
#include "cli/trace_discovery.h"

#include <sstream>

using namespace gmt::cli;

namespace {

Json frame(const std::string& function, const std::string& module = "/app/bin/app",
           const std::string& file = "app.cpp", int line = 10) {
    return Json{{"address", "0x401000"}, {"module", module}, {"function", function},
                {"file", file},          {"line", line},     {"inlined", false}};
}

Json leak(uint64_t bytes, uint64_t allocations, Json stack) {
    return Json{{"bytes", bytes},
                {"allocations", allocations},
                {"kind", "device"},
                {"api", "cudaMalloc"},
                {"stack", std::move(stack)}};
}

Json report(Json leaks, uint64_t peak, Json errors = Json::array()) {
    uint64_t leaked = 0;
    for (const Json& l : leaks) {
        leaked += l["bytes"].get<uint64_t>();
    }
    return Json{
        {"schema_version", 1},
        {"processes", Json::array({Json{{"pid", 42},
                                        {"command", "./app"},
                                        {"trace_file", "t.42.gmtrace"},
                                        {"complete", true},
                                        {"events", 10},
                                        {"dropped_events", 0},
                                        {"duration_ns", 1000}}})},
        {"summary", Json{{"leaked_bytes", leaked},
                         {"peak_bytes", peak},
                         {"failed_allocations", 0},
                         {"errors", errors.size()}}},
        {"kinds", Json{{"device", Json{{"peak_bytes", peak}}}}},
        {"devices", Json::array({Json{{"ordinal", 0}, {"name", "Sim"}, {"peak_bytes", peak}}})},
        {"leaks", std::move(leaks)},
        {"errors", std::move(errors)},
        {"failures", Json::array()}};
}

} // namespace

TEST_CASE("sizes accept binary suffixes") {
    CHECK(parseSize("0") == 0u);
    CHECK(parseSize("4096") == 4096u);
    CHECK(parseSize("1K") == 1024u);
    CHECK(parseSize("1KiB") == 1024u);
    CHECK(parseSize("3M") == 3u << 20);
    CHECK(parseSize("3mib") == 3u << 20);
    CHECK(parseSize("2G") == 2ull << 30);
    CHECK(parseSize("2GiB") == 2ull << 30);
    CHECK_FALSE(parseSize(""));
    CHECK_FALSE(parseSize("M"));
    CHECK_FALSE(parseSize("-1"));
    CHECK_FALSE(parseSize("12Q"));
    CHECK_FALSE(parseSize("99999999999999999999G"));
    CHECK_FALSE(parseSize("17179869184G")); // overflows 64 bits
    CHECK(formatBytes(512) == "512 B");
    CHECK(formatBytes(3 << 20) == "3.0 MiB");
}

TEST_CASE("suppression files parse and report their errors with the line") {
    std::istringstream in("# comment\n\nleak: init_*  \nerror:libfoo.so\n");
    Suppressions s = Suppressions::parse(in, "x.supp");
    REQUIRE(s.entries().size() == 2);
    CHECK(s.entries()[0].pattern == "init_*");
    CHECK(s.entries()[1].origin == "x.supp:4");
    std::istringstream bad("leak:ok\nleek:typo\n");
    CHECK_THROWS_WITH(Suppressions::parse(bad, "y.supp"), Catch::Contains("y.supp:2"));
    std::istringstream empty("leak:\n");
    CHECK_THROWS_AS(Suppressions::parse(empty, "z"), SuppressionError);
}

TEST_CASE("suppressions match function names and module paths") {
    Json stack = Json::array({frame("cudaMalloc", "/lib/libcudart.so.13"),
                              frame("ns::Cache::init(unsigned long) const"),
                              frame("main", "/opt/app/bin/app")});
    CHECK(stackMatches("ns::Cache::init", stack));
    CHECK(stackMatches("*Cache*", stack));
    CHECK(stackMatches("libcudart.so*", stack));
    CHECK(stackMatches("/opt/app/*", stack));
    CHECK_FALSE(stackMatches("Cache", stack));
    CHECK(withoutParameters("void f<int>(int)") == "void f<int>");
    CHECK(withoutParameters("A::operator()(int)") == "A::operator()");
    CHECK(withoutParameters("plain") == "plain");
}

TEST_CASE("check: leaks fail the gate unless within limits or suppressed") {
    Json r = report(Json::array({leak(3 << 20, 3, Json::array({frame("leak_buffers(int)")})),
                                 leak(100, 1, Json::array({frame("init_pool()")}))}),
                    8 << 20);
    GateLimits limits;
    Suppressions none;
    ProcessVerdict v = evaluateProcess(r, limits, none, {});
    CHECK(v.pid == 42);
    CHECK(v.failed());
    REQUIRE(v.checks.size() == 3);
    CHECK(v.checks[0].failed);
    CHECK_FALSE(v.checks[1].failed);
    bool named = false;
    for (const std::string& line : v.checks[0].details) {
        named = named || line.find("leak_buffers(int) at app.cpp:10") != std::string::npos;
    }
    CHECK(named);

    limits.max_leaked_bytes = (3 << 20) + 100;
    CHECK_FALSE(evaluateProcess(r, limits, none, {}).failed());
    limits.max_leaks = 3;
    CHECK(evaluateProcess(r, limits, none, {}).failed());

    std::istringstream in("leak:init_pool\nleak:unused\n");
    Suppressions supp = Suppressions::parse(in, "s");
    limits = GateLimits{};
    limits.max_leaked_bytes = 3 << 20;
    CHECK_FALSE(evaluateProcess(r, limits, supp, {}).failed());
    CHECK(supp.entries()[0].uses == 1);
    CHECK(supp.entries()[0].bytes == 100);
    CHECK(supp.entries()[1].uses == 0);

    limits.max_leaked_bytes = 1u << 30;
    limits.max_peak_bytes = 4 << 20;
    CHECK(evaluateProcess(r, limits, none, {}).checks[1].failed);
}

TEST_CASE("check: errors fail unless disabled or suppressed") {
    Json err{{"type", "double_free"},
             {"api", "cudaFree"},
             {"address", "0x7f00"},
             {"stack", Json::array({frame("free_twice()")})},
             {"allocation_stack", Json::array({frame("make_buffer()")})}};
    Json r = report(Json::array(), 0, Json::array({err}));
    GateLimits limits;
    Suppressions none;
    CHECK(evaluateProcess(r, limits, none, {}).checks[2].failed);
    limits.fail_on_errors = false;
    CHECK_FALSE(evaluateProcess(r, limits, none, {}).failed());
    limits.fail_on_errors = true;
    std::istringstream in("error:make_buffer\n");
    Suppressions supp = Suppressions::parse(in, "s");
    CHECK_FALSE(evaluateProcess(r, limits, supp, {}).failed());
    CHECK(supp.entries()[0].uses == 1);
}

TEST_CASE("check: an incomplete trace fails unless allowed") {
    Json r = report(Json::array(), 0);
    r["processes"][0]["complete"] = false;
    r["processes"][0]["incomplete_reason"] = "no trailer";
    GateLimits limits;
    Suppressions none;
    ProcessVerdict v = evaluateProcess(r, limits, none, {});
    REQUIRE(v.checks.size() == 4);
    CHECK(v.checks[3].name == "trace");
    CHECK(v.failed());
    limits.allow_incomplete = true;
    CHECK_FALSE(evaluateProcess(r, limits, none, {}).failed());
}

TEST_CASE("junit output escapes everything XML cares about") {
    CHECK(xmlEscape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;");
    CHECK(xmlEscape("x\ny") == "x&#10;y");
    CHECK(xmlEscape(std::string("bad\x01")) == "bad\xEF\xBF\xBD");
    JUnitSuite suite;
    suite.name = "pid 1 (./a <b>)";
    JUnitCase c;
    c.name = "leaks";
    c.failed = true;
    c.failure_message = "1 KiB leaked";
    c.failure_text = "f<int>() at a.cpp:1";
    suite.cases.push_back(c);
    std::string xml = renderJUnit({suite}, "gpumemtrace check");
    CHECK(xml.find("<testsuites name=\"gpumemtrace check\" tests=\"1\" failures=\"1\"") !=
          std::string::npos);
    CHECK(xml.find("f&lt;int&gt;()") != std::string::npos);
    CHECK(xml.find("./a &lt;b&gt;") != std::string::npos);
}

TEST_CASE("diff compares peaks and leak sites and applies the limits") {
    Json base =
        report(Json::array({leak(1 << 20, 1, Json::array({frame("leak_buffers(int)")}))}), 2 << 20);
    Json now = report(Json::array({leak(3 << 20, 3, Json::array({frame("leak_buffers(int)")})),
                                   leak(10, 1, Json::array({frame("fresh()")}))}),
                      4 << 20);
    ReportDiff d = diffReports(base, now, {});
    CHECK(d.violations.empty());
    REQUIRE(d.leaks.size() == 3); // total, leak_buffers, fresh
    CHECK(d.leaks[1].label.find("leak_buffers") == 0);
    CHECK(d.leaks[1].base == 1 << 20);
    CHECK(d.leaks[1].now == 3 << 20);

    DiffLimits limits;
    limits.max_peak_growth_pct = 100.0;
    CHECK(diffReports(base, now, limits).violations.empty()); // exactly +100%
    limits.max_peak_growth_pct = 99.0;
    CHECK_FALSE(diffReports(base, now, limits).violations.empty());
    limits = DiffLimits{};
    limits.max_leak_growth = (2 << 20) + 10;
    CHECK(diffReports(base, now, limits).violations.empty());
    limits.max_leak_growth = 2 << 20;
    CHECK_FALSE(diffReports(base, now, limits).violations.empty());
    CHECK(diffReports(now, base, limits).violations.empty());
    CHECK(renderDiff(d, "a", "b").find("leak_buffers") != std::string::npos);
}

TEST_CASE("site identity ignores addresses") {
    Json a = Json::array(
        {frame("f()"), Json{{"address", "0x1234"}, {"module", "/x/libm.so"}, {"offset", "0x34"}}});
    Json b = Json::array(
        {frame("f()"), Json{{"address", "0x9934"}, {"module", "/x/libm.so"}, {"offset", "0x34"}}});
    b[0]["address"] = "0xdead";
    CHECK(siteKey(a) == siteKey(b));
    CHECK(siteLabel(Json::array({frame("cudaMalloc", "/usr/lib/libcudart.so.13"),
                                 frame("mine()")})) == "mine() at app.cpp:10");
}

TEST_CASE("record finds the traces its template produces") {
    auto globs = templateGlobs("/tmp/out/t.%p.gmtrace", "host");
    REQUIRE(globs.size() == 2);
    CHECK(globs[0] == "/tmp/out/t.[0-9]*.gmtrace");
    CHECK(globs[1] == "/tmp/out/t.[0-9]*.[0-9]*.gmtrace");
    CHECK(templateGlobs("/d/%h-%t", "h*")[0] == "/d/h\\*-[0-9]*-[0-9]*");
    CHECK(templateGlobs("/d/%h-%t", "h")[1] == "/d/h-[0-9]*-[0-9]*.[0-9]*");
    CHECK(absoluteTemplate("/abs/x.%p") == "/abs/x.%p");
    CHECK(absoluteTemplate("x.%p").front() == '/');
}

TEST_CASE("record appends the preload library once") {
    CHECK(withPreload("", "/l/libgpumemtrace.so") == "/l/libgpumemtrace.so");
    CHECK(withPreload("/a.so", "/l/libgpumemtrace.so") == "/a.so:/l/libgpumemtrace.so");
    CHECK(withPreload("/a.so /l/libgpumemtrace.so", "/l/libgpumemtrace.so") ==
          "/a.so /l/libgpumemtrace.so");
}

TEST_CASE("record refuses a preload path that LD_PRELOAD would split or search") {
    CHECK_FALSE(preloadPathProblem("/opt/gpumemtrace/lib/libgpumemtrace.so"));
    // ld.so splits at spaces and colons: "/opt/my" and "dir/lib/..." (searched from the
    // program's working directory, where anyone could plant a library).
    CHECK(preloadPathProblem("/opt/my dir/lib/libgpumemtrace.so"));
    CHECK(preloadPathProblem("/opt/a:b/lib/libgpumemtrace.so"));
    CHECK(preloadPathProblem("lib/libgpumemtrace.so"));
    CHECK(preloadPathProblem(""));
}
