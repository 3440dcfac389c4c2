// Unit tests of the CLI's helpers: the rules `check` and `diff` apply, on hand-made
// reports, so they are pinned down without a recorder or a simulator.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "base/size_parse.h"
#include "check/builtin_suppressions.h"
#include "check/github_annotations.h"
#include "check/junit_writer.h"
#include "check/leak_gate.h"
#include "check/source_paths.h"
#include "check/suppressions.h"
#include "cli/command_suggestion.h"
#include "cli/framework_options.h"
#include "cli/preload_locator.h"
#include "cli/report_input.h"
#include "cli/trace_discovery.h"
#include "diff/report_diff.h"
#include "report/leak_policy.h"
#include "report/report_builder.h"
#include "support/temp_dir.h"
#include "views/frame_text.h"

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gmt;
using namespace gmt::cli;

namespace {

using analyzer::Frame;
using analyzer::Report;
using analyzer::Stack;

Frame frame(const std::string& function, const std::string& module = "/app/bin/app",
            const std::string& file = "app.cpp", int line = 10) {
    Frame f;
    f.address = 0x401000;
    f.module = module;
    f.function = function;
    f.file = file;
    f.line = line;
    return f;
}

analyzer::LeakSite leak(uint64_t bytes, uint64_t allocations, Stack stack) {
    analyzer::LeakSite l;
    l.bytes = bytes;
    l.allocations = allocations;
    l.kind = format::Kind::Device;
    l.api = "cudaMalloc";
    l.stack = std::move(stack);
    return l;
}

// A report as makeReport would give it: the listed leaks are every leak.
Report report(std::vector<analyzer::LeakSite> leaks, uint64_t peak,
              std::vector<analyzer::ErrorReport> errors = {}) {
    Report r;
    analyzer::ProcessReport p;
    p.pid = 42;
    p.command = "./app";
    p.trace_file = "t.42.gmtrace";
    p.events = 10;
    p.duration_ns = 1000;
    r.processes.push_back(p);
    for (const auto& l : leaks) {
        r.summary.leaked_bytes += l.bytes;
        r.summary.leaked_allocations += l.allocations;
    }
    r.processes[0].leaked_bytes = r.summary.leaked_bytes;
    r.summary.leak_groups = leaks.size();
    r.leak_scope.bytes = r.summary.leaked_bytes;
    r.leak_scope.allocations = r.summary.leaked_allocations;
    r.leak_scope.sites = leaks.size();
    r.summary.peak_bytes = peak;
    r.summary.errors = errors.size();
    r.kinds.push_back(
        {format::Kind::Device, 1, peak, r.summary.leaked_bytes, r.summary.leaked_allocations});
    r.devices.push_back({0, "Sim", 0, peak, 0, r.summary.leaked_bytes, 0});
    r.leaks = std::move(leaks);
    r.errors = std::move(errors);
    return r;
}

// What `check` does with a suppressions file and a saved report (every site listed).
Report suppressed(Report r, Suppressions& s) {
    analyzer::LeakPolicy policy;
    policy.suppress = [&s](const analyzer::LeakSite& l) { return s.matchLeak(l) != nullptr; };
    policy.top = r.leaks.size();
    analyzer::judgeSavedLeaks(r, policy);
    return r;
}

// What `check` does with a saved report and a caching allocator table (null: --count-cached).
void judged(Report& r, std::shared_ptr<const analyzer::CachingAllocatorTable> table) {
    analyzer::LeakPolicy policy;
    policy.caching_allocators = std::move(table);
    analyzer::judgeSavedLeaks(r, policy);
}

bool anyDetail(const CheckOutcome& c, const std::string& text) {
    for (const DetailLine& line : c.details) {
        if (line.str().find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST_CASE("a mistyped command names the one meant") {
    CHECK(cli::editDistance("reprot", "report") == 1); // two neighbours swapped
    CHECK(cli::editDistance("chek", "check") == 1);
    CHECK(cli::editDistance("", "diff") == 4);
    CHECK(cli::editDistance("export", "export") == 0);
    CLI::App app;
    for (const char* name : {"record", "report", "check", "diff", "dump", "export"}) {
        app.add_subcommand(name);
    }
    CHECK(cli::nearestCommand(app, "reprot") == "report");
    CHECK(cli::nearestCommand(app, "recrod") == "record");
    CHECK(cli::nearestCommand(app, "chekc") == "check");
    CHECK(cli::nearestCommand(app, "dif") == "diff");
    CHECK_FALSE(cli::nearestCommand(app, "x"));       // one letter: no guess
    CHECK_FALSE(cli::nearestCommand(app, "analyse")); // another word
    char prog[] = "gpumemtrace", typo[] = "reprot", known[] = "report", option[] = "--help";
    char* typo_argv[] = {prog, typo};
    CHECK(cli::unknownCommandError(app, 2, typo_argv) ==
          "gpumemtrace: unknown command 'reprot'; did you mean 'report'? "
          "(see `gpumemtrace --help`)");
    char* known_argv[] = {prog, known};
    CHECK_FALSE(cli::unknownCommandError(app, 2, known_argv));
    char* option_argv[] = {prog, option};
    CHECK_FALSE(cli::unknownCommandError(app, 2, option_argv));
    char bad[] = "x\x1b[2Jy";
    char* bad_argv[] = {prog, bad};
    const auto escaped = cli::unknownCommandError(app, 2, bad_argv);
    REQUIRE(escaped);
    CHECK(escaped->find('\x1b') == std::string::npos); // a terminal escape is shown, not sent
}

TEST_CASE("sizes: binary K/M/G/T, decimal KB/MB/GB/TB, fractions") {
    CHECK(parseSize("1.5G") == 3ull << 29);
    CHECK(parseSize("1.5 GiB") == 3ull << 29);
    CHECK(parseSize("100MB") == 100'000'000u);
    CHECK(parseSize("2kb") == 2000u);
    CHECK(parseSize("1TB") == 1'000'000'000'000ull);
    CHECK(parseSize("1T") == 1ull << 40);
    CHECK(parseSize("0.5K") == 512u);
    CHECK(parseSize("1.0001K") == 1024u);                 // rounded down to whole bytes
    CHECK(parseSize("0.999999999T") == 1099511626676ull); // floor(999999999 * 2^40 / 10^9)
    CHECK(parseSize("16777215.999999999T") == 18446744073709550516ull);
    CHECK_FALSE(parseSize("16777216T")); // 2^64: overflows
    CHECK_FALSE(parseSize("1."));
    CHECK_FALSE(parseSize(".5G"));
    CHECK_FALSE(parseSize("1.5.5G"));
    CHECK_FALSE(parseSize("1.0000000001G")); // ten fraction digits
    CHECK_FALSE(parseSize("1 .5G"));
}

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
    Stack stack{frame("cudaMalloc", "/lib/libcudart.so.13"),
                frame("ns::Cache::init(unsigned long) const"), frame("main", "/opt/app/bin/app")};
    CHECK(stackMatches("ns::Cache::init", stack));
    CHECK(stackMatches("*Cache*", stack));
    CHECK(stackMatches("libcudart.so*", stack));
    CHECK(stackMatches("/opt/app/*", stack));
    CHECK_FALSE(stackMatches("Cache", stack));
    CHECK(withoutParameters("void f<int>(int)") == "void f<int>");
    CHECK(withoutParameters("A::operator()(int)") == "A::operator()");
    CHECK(withoutParameters("plain") == "plain");
    // A Python frame has no module: its file stands in.
    Frame py;
    py.language = analyzer::FrameLanguage::Python;
    py.function = "load_model";
    py.file = "/srv/app/model.py";
    py.line = 3;
    CHECK(stackMatches("load_model", {py}));
    CHECK(stackMatches("model.py", {py}));
    CHECK(stackMatches("/srv/app/*", {py}));
}

TEST_CASE("suppressions match Python frames by function and by file:line") {
    Frame python;
    python.language = analyzer::FrameLanguage::Python;
    python.function = "Model.step";
    python.file = "/src/train.py";
    python.line = 42;
    Stack stack{frame("cudaMalloc", "/lib/libcudart.so.13"), python};
    CHECK(stackMatches("train.py:*", stack));
    CHECK(stackMatches("train.py:42", stack));
    CHECK(stackMatches("/src/*.py:*", stack));
    CHECK(stackMatches("Model.step", stack));
    CHECK(stackMatches("*.step", stack));
    CHECK_FALSE(stackMatches("train.py:43", stack));
    CHECK_FALSE(stackMatches("eval.py:*", stack));
    // A native frame's source file is not matched this way: only its function and module.
    CHECK_FALSE(stackMatches("app.cpp:*", {frame("f", "/opt/app", "app.cpp", 42)}));
    CHECK_FALSE(stackMatches("app.cpp", {frame("f", "/opt/app", "app.cpp", 42)}));
}

TEST_CASE("check: leaks fail the gate unless within limits or suppressed") {
    Report r = report(
        {leak(3 << 20, 3, {frame("leak_buffers(int)")}), leak(100, 1, {frame("init_pool()")})},
        8 << 20);
    GateLimits limits;
    Suppressions none;
    ProcessVerdict v = evaluateProcess(r, limits, none, {});
    CHECK(v.pid == 42);
    CHECK(v.failed());
    REQUIRE(v.checks.size() == 3);
    CHECK(v.checks[0].failed);
    CHECK_FALSE(v.checks[1].failed);
    CHECK(anyDetail(v.checks[0], "leak_buffers(int) at app.cpp:10"));

    limits.max_leaked_bytes = (3 << 20) + 100;
    CHECK_FALSE(evaluateProcess(r, limits, none, {}).failed());
    limits.max_leaks = 3;
    CHECK(evaluateProcess(r, limits, none, {}).failed());

    std::istringstream in("leak:init_pool\nleak:unused\n");
    Suppressions supp = Suppressions::parse(in, "s");
    limits = GateLimits{};
    limits.max_leaked_bytes = 3 << 20;
    ProcessVerdict with_supp = evaluateProcess(suppressed(r, supp), limits, supp, {});
    CHECK_FALSE(with_supp.failed());
    CHECK_THAT(with_supp.checks[0].summary, Catch::Contains("100 B suppressed"));
    CHECK(supp.entries()[0].uses == 1);
    CHECK(supp.entries()[0].bytes == 100);
    CHECK(supp.entries()[1].uses == 0);

    limits.max_leaked_bytes = 1u << 30;
    limits.max_peak_bytes = 4 << 20;
    CHECK(evaluateProcess(r, limits, none, {}).checks[1].failed);
}

TEST_CASE("check: errors fail unless disabled or suppressed") {
    analyzer::ErrorReport err;
    err.type = analyzer::ErrorType::DoubleFree;
    err.api = "cudaFree";
    err.address = 0x7f00;
    err.stack = {frame("free_twice()")};
    err.allocation_stack = {frame("make_buffer()")};
    Report r = report({}, 0, {err});
    GateLimits limits;
    Suppressions none;
    ProcessVerdict v = evaluateProcess(r, limits, none, {});
    CHECK(v.checks[2].failed);
    CHECK(anyDetail(v.checks[2], "double_free: cudaFree(0x7f00)"));
    limits.fail_on_errors = false;
    CHECK_FALSE(evaluateProcess(r, limits, none, {}).failed());
    limits.fail_on_errors = true;
    std::istringstream in("error:make_buffer\n");
    Suppressions supp = Suppressions::parse(in, "s");
    CHECK_FALSE(evaluateProcess(r, limits, supp, {}).failed());
    CHECK(supp.entries()[0].uses == 1);
    // Errors past the listed ones cannot be matched: they count.
    r.summary.errors = 3;
    CHECK(evaluateProcess(r, limits, supp, {}).checks[2].failed);
}

TEST_CASE("check: an incomplete trace fails unless allowed") {
    Report r = report({}, 0);
    r.processes[0].complete = false;
    r.processes[0].incomplete_reason = "no trailer";
    GateLimits limits;
    Suppressions none;
    ProcessVerdict v = evaluateProcess(r, limits, none, {});
    REQUIRE(v.checks.size() == 4);
    CHECK(v.checks[3].name == "trace");
    CHECK(v.failed());
    limits.allow_incomplete = true;
    CHECK_FALSE(evaluateProcess(r, limits, none, {}).failed());
}

TEST_CASE("check --phase: the limits apply to the phase; an unmarked phase fails") {
    Report r = report({}, 10 << 20);
    r.phases.push_back({42, "train", 3, 100, 900, 6, 6 << 20, 6, 5 << 20, 150, 0, 0, {"train"}, 0});
    r.phases.push_back({42, "eval", 1, 1000, 100, 1, 1 << 20, 1, 9 << 20, 1050, 0, 0, {"eval"}, 0});
    GateLimits limits;
    limits.phase = "train";
    limits.max_peak_bytes = 6 << 20;
    Suppressions none;
    ProcessVerdict v = evaluateProcess(r, limits, none, {});
    REQUIRE(v.checks.size() == 4);
    CHECK(v.checks[0].name == "phase");
    CHECK_FALSE(v.checks[0].failed);
    CHECK_THAT(v.checks[0].summary, Catch::Contains("marked 3 times"));
    CHECK_FALSE(v.checks[2].failed); // train peaked at 5 MiB, the run at 10 MiB
    limits.phase = "eval";
    v = evaluateProcess(r, limits, none, {});
    CHECK(v.checks[2].failed);
    CHECK_THAT(v.checks[2].summary, Catch::Contains("9.0 MiB") && Catch::Contains("eval"));
    limits.phase = "warmup";
    v = evaluateProcess(r, limits, none, {});
    CHECK(v.checks[0].failed);
    CHECK(anyDetail(v.checks[0], "phases marked: train, eval"));
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
    Report base = report({leak(1 << 20, 1, {frame("leak_buffers(int)")})}, 2 << 20);
    Report now = report(
        {leak(3 << 20, 3, {frame("leak_buffers(int)")}), leak(10, 1, {frame("fresh()")})}, 4 << 20);
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
    Frame unsymbolized;
    unsymbolized.address = 0x1234;
    unsymbolized.module = "/x/libm.so";
    unsymbolized.offset = 0x34;
    Stack a{frame("f()"), unsymbolized};
    std::vector<Frame> moved = a.frames();
    moved[0].address = 0xdead;
    moved[1].address = 0x9934;
    Stack b(moved);
    CHECK(analyzer::siteKey(a) == analyzer::siteKey(b));
    CHECK(analyzer::siteLabel({frame("cudaMalloc", "/usr/lib/libcudart.so.13"), frame("mine()")}) ==
          "mine() at app.cpp:10");
}

TEST_CASE("record finds the traces its template produces") {
    auto globs = templateGlobs("/tmp/out/t.%p.gmtrace", "host");
    REQUIRE(globs.size() == 2);
    CHECK(globs[0] == "/tmp/out/t.[0-9]*.gmtrace");
    CHECK(globs[1] == "/tmp/out/t.[0-9]*.[0-9]*.gmtrace");
    CHECK(templateGlobs("/d/%h-%t", "h*")[0] == "/d/h\\*-[0-9]*-[0-9]*");
    CHECK(templateGlobs("/d/%h-%t", "h")[1] == "/d/h-[0-9]*-[0-9]*.[0-9]*");
    CHECK(templateGlobs("/d/%q{JOB}/rank%r.gmtrace", "h")[0] == "/d/*/rank*.gmtrace");
    CHECK(templateGlobs("/d/%q{JOB/r", "h")[0] == "/d/%q{JOB/r"); // unterminated: as written
    CHECK(absoluteTemplate("/abs/x.%p") == "/abs/x.%p");
    CHECK(absoluteTemplate("x.%p").front() == '/');
}

TEST_CASE("record appends the preload library once") {
    CHECK(withPreload("", "/l/libgpumemtrace.so") == "/l/libgpumemtrace.so");
    CHECK(withPreload("/a.so", "/l/libgpumemtrace.so") == "/a.so:/l/libgpumemtrace.so");
    CHECK(withPreload("/a.so /l/libgpumemtrace.so", "/l/libgpumemtrace.so") ==
          "/a.so /l/libgpumemtrace.so");
}

TEST_CASE("source root: paths inside it become relative - build-relative paths are found") {
    test::TempDir dir;
    std::filesystem::create_directories(dir.file("src/net"));
    std::ofstream(dir.file("src/net/layer.cpp")) << "";
    SourceRoot root(dir.path());
    CHECK(root.relative(dir.file("src/net/layer.cpp")) == "src/net/layer.cpp");
    CHECK(root.relative(dir.file("src/../src/net/layer.cpp")) == "src/net/layer.cpp");
    CHECK(root.relative("/usr/include/c++/12/vector") == "/usr/include/c++/12/vector");
    // ccache's base_dir, or a build naming sources relatively: "../../src/net/layer.cpp".
    CHECK(root.relative("../../src/net/layer.cpp") == "src/net/layer.cpp");
    CHECK(root.relative("../other/thing.cpp") == "../other/thing.cpp"); // not under the root
    CHECK(root.relative("") == "");
}

TEST_CASE("github annotations: escaped as workflow commands want") {
    CHECK(githubEscape("50% of a:b, c\nd\r", false) == "50%25 of a:b, c%0Ad%0D");
    CHECK(githubEscape("a:b,c%", true) == "a%3Ab%2Cc%25");
    // Any other control character (an escape sequence from a trace) is made visible, in a
    // message and in a property alike; printable UTF-8 stays.
    CHECK(githubEscape("a\x1b[31mb\x07\tc", false) == "a\\x1b[31mb\\x07\\x09c");
    CHECK(githubEscape("f\x1b]0;t\x07:1", true) == "f\\x1b]0;t\\x07%3A1");
    CHECK(githubEscape("caf\xc3\xa9 \xff", false) == "caf\xc3\xa9 \\xff");
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

TEST_CASE("built-in suppressions: the CUDA libraries' own allocations, each with its reason") {
    Suppressions s;
    s.add(builtinSuppressions());
    REQUIRE(s.entries().size() >= 6);
    for (const Suppression& e : s.entries()) {
        CHECK(e.origin == "built-in");
        CHECK(e.why.size() > 40);
        CHECK(e.type == Suppression::Type::Leak);
    }
    // A workspace cuBLAS allocated for its handle, a cuDNN engine's buffer, NCCL's channel.
    Report r = report(
        {leak(32 << 20, 1,
              {frame("cudaMalloc", "/lib/libcudart.so.13"),
               frame("", "/opt/venv/nvidia/cublas/lib/libcublas.so.13"), frame("main")}),
         leak(8 << 20, 2,
              {frame("cudaMalloc", ""), frame("", "/usr/lib/libcudnn_ops.so.9"), frame("main")}),
         leak(4 << 20, 1,
              {frame("cuMemCreate", ""), frame("ncclCommInitRank", "/usr/lib/libnccl.so.2")}),
         leak(1 << 20, 1, {frame("train_step")})},
        0);
    r = suppressed(std::move(r), s);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].bytes == 1u << 20);
    CHECK(r.leak_scope.suppressed_sites == 3);
    CHECK(r.leak_scope.suppressed_bytes == (44u << 20));
    // The printed list is a suppressions file.
    std::istringstream in(builtinSuppressionsText());
    const Suppressions printed = Suppressions::parse(in, "printed");
    CHECK(printed.entries().size() == s.entries().size());
}

TEST_CASE("a saved report and the caching allocator table: listed leaks move, or come back") {
    auto cupy =
        leak(16 << 20, 2, {frame("cudaMalloc", ""), frame("SingleDeviceMemoryPool._malloc")});
    cupy.pid = 42;
    Report r = report({cupy, leak(1 << 20, 1, {frame("train_step")})}, 20 << 20);
    judged(r, analyzer::CachingAllocatorTable::builtin());
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leak_scope.bytes == 1u << 20);
    CHECK(r.summary.leaked_bytes == 1u << 20);
    CHECK(r.summary.held_at_exit_bytes == 16u << 20);
    REQUIRE(r.held_at_exit.size() == 1);
    CHECK(r.held_at_exit[0].allocator == "CuPy memory pool");
    CHECK(r.held_at_exit[0].pid == 42);
    // check says what it did not count.
    Suppressions none;
    const ProcessVerdict v = evaluateProcess(r, GateLimits{}, none, GateDetail{});
    REQUIRE(v.checks.size() >= 2);
    CHECK(v.checks[0].name == "leaks");
    CHECK(v.checks[0].failed);
    CHECK(v.checks[0].summary.find("16.0 MiB held by caching allocators at exit, not counted") !=
          std::string::npos);

    // --count-cached: what the report holds is leaked again.
    judged(r, nullptr);
    CHECK(r.held_at_exit.empty());
    CHECK(r.leaks.size() == 2);
    CHECK(r.leaks[0].bytes == 16u << 20);
    CHECK(r.leak_scope.bytes == 17u << 20);
    CHECK(r.summary.leaked_bytes == 17u << 20);
    CHECK(r.summary.held_at_exit_bytes == 0);
}
