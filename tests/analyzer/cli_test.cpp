// The CLI: dump lines, report formats, exit statuses, and every report validated against
// docs/report.schema.json.
#include "base/text_safety.h"
#include "report/report_json.h"
#include "report_fixture.h"
#include "support/run_command.h"
#include "views/html_report.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;
using format::Op;

namespace {

constexpr uint64_t B = 0x7f0000000000;

std::vector<nlohmann::json> lines(const std::string& out) {
    std::vector<nlohmann::json> v;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        v.push_back(nlohmann::json::parse(line));
    }
    return v;
}

std::string cli(const std::string& args) {
    return std::string(GMT_CLI) + " " + args;
}

// Something of everything: every report section non-empty, a CPython process with a leak
// whose stack has Python frames.
TraceBuilder richTrace() {
    auto header = TraceBuilder::defaultHeader();
    header.python_version = 0x030b02f0;
    header.python_status = format::PythonStatus::Captured;
    auto b = standardTrace(2, header);
    b.module({0x400000, 0x400000, 0x500000, "/usr/bin/app", "\xab\xcd"});
    b.phase(5, "warmup");
    b.endFrame(); // so that a torn trace still has a valid first frame
    b.event(Ev::alloc(10, B, 3 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(11, B + 4 * MiB, 4096, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::alloc(12, 0x10000, 100, Api::cudaMallocHost, Kind::HostPinned, 3, -1));
    auto pool = Ev::alloc(13, B + 8 * MiB, 1000, Api::cudaMallocAsync, Kind::Pool, 2, 1);
    pool.stream = 0x5;
    b.event(pool);
    b.event(Ev::op(14, Op::VmmCreate, Api::cuMemCreate, 0, 2 * MiB, 0xa1));
    b.event(Ev::failed(15, 100ull << 30, 2, 1ull << 30, 80ull << 30));
    b.event(Ev::free(16, B));
    b.event(Ev::free(17, B));
    format::PythonCodeInfo code;
    code.id = 1;
    code.first_line = 40;
    code.filename = "/srv/train.py";
    code.name = "Model.step";
    code.line_table = std::string("\x80\x00", 2); // one code unit, on the first line
    b.pythonCode(code);
    // Model.step in place of the evaluation frame 0x402000.
    b.stack(4, {0x401300, 0x402000}, {{1, 0, 1}});
    b.event(Ev::alloc(18, B + 16 * MiB, 2048, Api::cudaMalloc, Kind::Device, 4));
    b.trailer(20);
    return b;
}

} // namespace

TEST_CASE("dump: header first - then every record as a JSON line") {
    TempDir dir;
    auto b = richTrace();
    auto path = b.write(dir.file("t.gmtrace"));
    auto r = runCommand(cli("dump " + path));
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    auto v = lines(r.out);
    REQUIRE(v.size() > 10);
    CHECK(r.out.rfind("{\"record\":\"header\"", 0) == 0);
    CHECK(v[0]["pid"] == 4242);
    CHECK(v[0]["command"] == "./app --flag");
    CHECK(v[1]["record"] == "device");
    CHECK(v[3]["record"] == "stack");
    CHECK(v[3]["frames"][0] == "0x401000");
    const auto& module = v[6];
    CHECK(module["record"] == "module");
    CHECK(module["build_id"] == "abcd");
    CHECK(v[7]["record"] == "phase");
    CHECK(v[7]["kind"] == "mark");
    const auto& alloc = v[8];
    CHECK(alloc["record"] == "event");
    CHECK(alloc["event"] == "alloc");
    CHECK(alloc["api"] == "cudaMalloc");
    CHECK(alloc["kind"] == "device");
    CHECK(alloc["result"] == 0);
    CHECK(alloc["address"] == "0x7f0000000000");
    CHECK(alloc["size"] == 3 * MiB);
    CHECK(alloc["device"] == 0);
    CHECK(alloc["tid"] == 100);
    CHECK(alloc["time_ns"] == 10);
    CHECK(alloc["stack"] == 1);
    CHECK_FALSE(alloc.contains("handle"));
    CHECK(v[11]["stream"] == "0x5");
    CHECK(v[12]["event"] == "vmm_create");
    CHECK(v[12]["handle"] == "0xa1");
    CHECK(v[13]["result"] == 2);
    CHECK(v[13]["device_free"] == 1ull << 30);
    CHECK(v[0]["python_version"] == "3.11.2");
    CHECK(v[0]["python_status"] == "captured");
    CHECK(v[16]["record"] == "python_code");
    CHECK(v[16]["name"] == "Model.step");
    CHECK(v[16]["line_table"] == "8000");
    CHECK(v[17]["record"] == "stack");
    CHECK(v[17]["python"] == nlohmann::json::parse(R"([{"code":1,"instruction":0,"position":1}])"));
    CHECK(v.back()["record"] == "trailer");
    CHECK(v.back()["events"] == 9);
    CHECK(v.back()["python_status"] == "captured");
}

TEST_CASE("dump of a torn trace prints the valid part - then the offset on stderr - exit 1") {
    TempDir dir;
    auto b = richTrace();
    auto bytes = b.bytes();
    bytes.resize(bytes.size() - 7);
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    auto r = runCommand(cli("dump " + dir.file("t.gmtrace")));
    CHECK(r.status == 1);
    auto v = lines(r.out);
    REQUIRE(v.size() == 8);
    CHECK(v[0]["record"] == "header");
    CHECK_THAT(r.err, Catch::Contains(dir.file("t.gmtrace")) &&
                          Catch::Contains("offset " + std::to_string(b.frameOffsets().at(1))));
}

TEST_CASE("dump of a trace without trailer (killed process) exits 1") {
    TempDir dir;
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 1));
    auto path = b.write(dir.file("t.gmtrace"));
    auto r = runCommand(cli("dump " + path));
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::Contains("no trailer"));
    CHECK(lines(r.out).size() == 6); // header, device, 3 stacks, the event
}

TEST_CASE("report: bad input is one line naming the file and offset - exit 2") {
    TempDir dir;
    TraceBuilder::writeFile(dir.file("empty"), {});
    std::vector<uint8_t> foreign(5000, 'x');
    TraceBuilder::writeFile(dir.file("foreign"), foreign);
    TraceBuilder future;
    future.header().formatVersion(99).write(dir.file("future"));
    for (const char* name : {"empty", "foreign", "future", "missing"}) {
        for (const char* cmd : {"report ", "dump "}) {
            auto r = runCommand(cli(cmd + dir.file(name)));
            INFO(cmd << name << ": " << r.err);
            CHECK(r.status == 2);
            CHECK(r.out.empty());
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
            CHECK_THAT(r.err, Catch::Contains(dir.file(name)) && Catch::Contains("offset "));
        }
    }
}

TEST_CASE("report: usage errors exit 2") {
    CHECK(runCommand(cli("report")).status == 2);
    CHECK(runCommand(cli("report --format xml x")).status == 2);
    CHECK(runCommand(cli("frobnicate")).status == 2);
}

TEST_CASE("report: JSON with --format json - valid against the schema") {
    TempDir dir;
    auto b = richTrace();
    auto path = b.write(dir.file("t.gmtrace"));
    auto r = runCommand(cli("report --no-symbols --format json " + path));
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(r.out.rfind("{\n  \"schema_version\": 1", 0) == 0);
    auto errors = reportSchema().validate(j);
    INFO(errors.size() << " schema errors, first: " << (errors.empty() ? "" : errors[0]));
    CHECK(errors.empty());
    for (const char* section : {"leaks", "fragmentation", "failures", "errors", "timeline"}) {
        INFO(section);
        CHECK_FALSE(j[section].empty());
    }
    CHECK(j["peak"]["top_sites"].size() >= 1);
    CHECK(j["leaks"][0]["stack"][0]["module"] == "/usr/bin/app");
    CHECK(j["leaks"][0]["stack"][0]["offset"] == "0x1000");
    CHECK(j["leaks"][0]["stack"][0]["language"] == "native");
    CHECK(j["processes"][0]["python"] ==
          nlohmann::json::parse(R"({"version": "3.11.2", "status": "captured"})"));
    // The Python frame in place of the native frame its evaluation frame was.
    bool found = false;
    for (const auto& leak : j["leaks"]) {
        if (leak["bytes"] == 2048) {
            found = true;
            REQUIRE(leak["stack"].size() == 2);
            CHECK(leak["stack"][0]["offset"] == "0x1300");
            CHECK(leak["stack"][1] == nlohmann::json::parse(R"({"address": "", "module": "",
                "function": "Model.step", "file": "/srv/train.py", "line": 40, "inlined": false,
                "own": true, "language": "python"})"));
        }
    }
    CHECK(found);
}

TEST_CASE("report: text by default off a terminal - JSON for -o FILE.json") {
    TempDir dir;
    auto b = richTrace();
    auto path = b.write(dir.file("t.gmtrace"));
    auto r = runCommand(cli("report " + path));
    REQUIRE(r.status == 0);
    for (const char* heading :
         {"Summary", "Leaks (largest first)", "Peak ", "Fragmentation", "Failed allocations",
          "Errors", "double_free", "more than the device has", "app+0x1000", "Phases"}) {
        CHECK_THAT(r.out, Catch::Contains(heading));
    }
    CHECK(r.out == runCommand(cli("report --format text " + path)).out);
    // Off a terminal: no colour, whole lines.
    CHECK(r.out.find('\033') == std::string::npos);
    auto o = runCommand(cli("report -o " + dir.file("r.json") + " " + path));
    CHECK(o.status == 0);
    CHECK(o.out.empty());
    std::ifstream f(dir.file("r.json"));
    auto j = nlohmann::json::parse(f);
    CHECK(j["schema_version"] == 1);
    auto t = runCommand(cli("report -o " + dir.file("r.txt") + " " + path));
    CHECK(t.status == 0);
    std::ifstream txt(dir.file("r.txt"));
    std::string first;
    std::getline(txt, first);
    CHECK_THAT(first, Catch::StartsWith("gpumemtrace report"));
}

TEST_CASE("report of a truncated trace: complete false - prefix analysed - schema-valid") {
    TempDir dir;
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 1000)).endFrame();
    b.event(Ev::free(2, B)).trailer(3);
    auto bytes = b.bytes();
    bytes.resize(bytes.size() - 2);
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    auto r = runCommand(cli("report --format json " + dir.file("t.gmtrace")));
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["processes"][0]["complete"] == false);
    CHECK(j["processes"][0]["events"] == 1);
    CHECK_THAT(j["processes"][0]["incomplete_reason"].get<std::string>(), Catch::Contains("torn"));
    CHECK(j["summary"]["leaked_bytes"] == 1000);
    CHECK(reportSchema().validate(j).empty());
}

TEST_CASE("the schema validator rejects what the contract forbids") {
    auto b = richTrace();
    auto j = nlohmann::json::parse(analyzer::jsonText(analyzer::toJson(report(b))));
    REQUIRE(reportSchema().validate(j).empty());
    auto broken = j;
    broken["summary"].erase("peak_bytes");
    CHECK_FALSE(reportSchema().validate(broken).empty());
    broken = j;
    broken["errors"][0]["type"] = "oops";
    CHECK_FALSE(reportSchema().validate(broken).empty());
    broken = j;
    broken["leaks"][0]["stack"][0]["address"] = 123;
    CHECK_FALSE(reportSchema().validate(broken).empty());
}

namespace {

// A value of another type than the schema allows.
nlohmann::json wrongType(const nlohmann::json& schema) {
    const nlohmann::json type = schema.value("type", nlohmann::json());
    auto is = [&](const char* t) {
        return type == t ||
               (type.is_array() && std::find(type.begin(), type.end(), t) != type.end());
    };
    if (is("string") || schema.contains("enum")) {
        return 12;
    }
    if (is("boolean") || is("integer") || is("number") || schema.contains("const")) {
        return "yes";
    }
    if (is("array")) {
        return nlohmann::json::object();
    }
    return nlohmann::json::array();
}

} // namespace

TEST_CASE("a saved report with a missing or mistyped field: diff and check exit 2 naming it") {
    TempDir dir;
    auto b = richTrace();
    auto trace = b.write(dir.file("t.gmtrace"));
    const std::string good = dir.file("good.json");
    REQUIRE(runCommand(cli("report --no-symbols -o " + good + " " + trace)).status == 0);
    std::ifstream in(good);
    const auto report = nlohmann::json::parse(in);
    // The saved report itself is accepted by both.
    CHECK(runCommand(cli("diff " + good + " " + good)).status == 0);
    CHECK(runCommand(
              cli("check --max-leaked-bytes 1G --no-fail-on-errors --allow-incomplete " + good))
              .status == 0);

    const auto fields = reportSchema().requiredFields(report);
    // Every section of the schema is reached.
    CHECK(fields.size() > 80);
    const std::string bad = dir.file("bad.json");
    size_t tried = 0;
    for (const auto& field : fields) {
        for (bool remove : {true, false}) {
            auto mutated = report;
            if (remove) {
                mutated[field.pointer.parent_pointer()].erase(field.pointer.back());
            } else {
                mutated[field.pointer] = wrongType(field.schema);
            }
            std::ofstream(bad) << mutated.dump(2);
            for (const std::string& command : {"diff " + good + " " + bad, "check " + bad}) {
                auto r = runCommand(cli(command));
                INFO(command << (remove ? ": without " : ": mistyped ") << field.path << "\n"
                             << r.err);
                CHECK(r.status == 2);
                CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
                CHECK_THAT(r.err, Catch::Contains(bad) && Catch::Contains(field.path));
                ++tried;
            }
        }
    }
    CHECK(tried == fields.size() * 4);
}

TEST_CASE("a saved report reads back as the report it was made from") {
    auto b = richTrace();
    const auto original = analyzer::toJson(report(b));
    const auto again = analyzer::toJson(analyzer::fromJson(original));
    CHECK(again == original);
    // A field of the wrong type inside a stack is named with its full path.
    auto broken = original;
    broken["leaks"][0]["stack"][1]["line"] = "ten";
    CHECK_THROWS_WITH(analyzer::fromJson(broken), "leaks[0].stack[1].line: expected an integer");
    broken = original;
    broken["summary"]["peak_bytes"] = -5;
    CHECK_THROWS_WITH(analyzer::fromJson(broken),
                      "summary.peak_bytes: expected an unsigned integer");
    broken = original;
    broken["schema_version"] = 2;
    CHECK_THROWS_WITH(analyzer::fromJson(broken), Catch::StartsWith("schema_version: version 2"));
}

TEST_CASE("the report written straight as text is byte for byte the tree's text") {
    auto b = richTrace();
    const analyzer::Report r = report(b);
    for (int indent : {-1, 2}) {
        std::string text;
        analyzer::writeJsonText(r, text, indent);
        CHECK(text == analyzer::jsonText(analyzer::toJson(r), indent));
    }
    // With the stacks written by a callback, as the HTML page writes them.
    const analyzer::StackJson depth = [](const analyzer::Stack& s) {
        return analyzer::Json::array({s.size(), analyzer::Json::object()});
    };
    std::string text;
    analyzer::writeJsonText(r, text, 2, &depth);
    CHECK(text == analyzer::jsonText(analyzer::toJson(r, depth), 2));
}

TEST_CASE("a stack named by several lists of a report is held once") {
    auto b = richTrace();
    const analyzer::Report r = report(b);
    // Stack 2's allocations are leaked and among the peak's holders: two lists, one frame list.
    const auto leak =
        std::find_if(r.leaks.begin(), r.leaks.end(), [](const auto& l) { return l.stack_id == 2; });
    const auto peak = std::find_if(r.peak.top_sites.begin(), r.peak.top_sites.end(),
                                   [](const auto& p) { return p.stack_id == 2; });
    REQUIRE(leak != r.leaks.end());
    REQUIRE(peak != r.peak.top_sites.end());
    REQUIRE(leak->stack.size() >= 2);
    CHECK(leak->stack.data() == peak->stack.data());
}

TEST_CASE("a report written to a file as it is made: the same bytes, never whole in memory") {
    // Enough leak sites (distinct stacks) that the text is several megabytes.
    auto b = standardTrace();
    constexpr uint32_t kSites = 12'000;
    for (uint32_t i = 0; i < kSites; ++i) {
        b.stack(100 + i, {0x401000 + i * 16ull, 0x402000, 0x403000});
        b.event(Ev::alloc(10 + i, B + uint64_t{i} * 4096, 4096, Api::cudaMalloc, Kind::Device,
                          100 + i));
    }
    b.trailer(10 + kSites);
    analyzer::ReportOptions options;
    options.top = kSites;
    const analyzer::Report r = report(b, options);
    REQUIRE(r.leaks.size() == kSites);

    std::string whole;
    analyzer::writeJsonText(r, whole, 2);
    std::string streamed;
    std::string rest;
    size_t pieces = 0;
    size_t largest = 0;
    analyzer::writeJsonText(r, rest, 2, nullptr, [&](std::string_view piece) {
        streamed += piece;
        ++pieces;
        largest = std::max(largest, piece.size());
    });
    CHECK(whole.size() > 4 * (size_t{1} << 20));
    CHECK(streamed + rest == whole);
    CHECK(pieces >= 4);
    CHECK(largest < 2 * (size_t{1} << 20)); // a megabyte and what the last value added

    if (analyzer::htmlReportAvailable()) {
        std::string page;
        size_t page_pieces = 0;
        analyzer::writeHtml(r, [&](std::string_view piece) {
            page += piece;
            ++page_pieces;
        });
        CHECK(page == analyzer::renderHtml(r));
        CHECK(page_pieces > 4);
    }
}

TEST_CASE("strings from a trace may be any bytes: JSON, XML and the terminal stay safe") {
    TempDir dir;
    auto h = TraceBuilder::defaultHeader();
    h.command = "./app caf\xe9 \x1b[31mred\x1b[0m \xff\xfe";
    h.host = "host\x07";
    TraceBuilder b;
    b.header(h).device();
    b.module({0x400000, 0x400000, 0x500000,
              "/opt/\xe9t\xe9/\x1b]0;title\x07"
              "app",
              ""});
    b.stack(1, {0x401000});
    b.phase(1, "ph\xc3\x28"
               "ase");
    b.event(Ev::alloc(2, B, 4096));
    b.event(Ev::free(3, B + 1)); // an invalid free: an error with a stack
    b.trailer(4);
    auto path = b.write(dir.file("t.gmtrace"));

    auto json = runCommand(cli("report --no-symbols --format json " + path));
    REQUIRE(json.status == 0);
    auto j = nlohmann::json::parse(json.out); // throws on invalid UTF-8
    CHECK(j["processes"][0]["command"] == "./app caf\uFFFD \u001b[31mred\u001b[0m \uFFFD\uFFFD");
    CHECK(reportSchema().validate(j).empty());

    auto dump = runCommand(cli("dump " + path));
    REQUIRE(dump.status == 0);
    for (const auto& line : lines(dump.out)) {
        CHECK(line.is_object());
    }

    auto text = runCommand(cli("report --no-symbols " + path));
    REQUIRE(text.status == 0);
    CHECK(text.out.find('\x1b') == std::string::npos);
    CHECK(text.out.find('\x07') == std::string::npos);
    CHECK(analyzer::validUtf8(text.out) == text.out);
    CHECK_THAT(text.out, Catch::Contains("caf\\xe9 \\x1b[31mred"));
    CHECK_THAT(text.out, Catch::Contains("\\x1b]0;title\\x07app+0x1000"));

    const std::string xml = dir.file("check.xml");
    auto check = runCommand(cli("check --no-symbols --junit " + xml + " " + path));
    CHECK(check.status == 1);
    CHECK(check.out.find('\x1b') == std::string::npos);
    std::ifstream f(xml);
    std::string junit((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    CHECK(analyzer::validUtf8(junit) == junit);
    CHECK(junit.find('\x1b') == std::string::npos);
    CHECK(junit.find('\x07') == std::string::npos);
    auto lint = runCommand("command -v xmllint >/dev/null || exit 77; xmllint --noout " + xml);
    CHECK((lint.status == 0 || lint.status == 77));
}

namespace {

// Runs argv to its end; returns its peak resident memory in KiB (its own, not any other
// child's) and sets `status` to its exit status.
long peakRssKiB(const std::vector<std::string>& argv, int& status) {
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    int raw = 0;
    struct rusage usage {};
    REQUIRE(wait4(pid, &raw, 0, &usage) == pid);
    status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return usage.ru_maxrss;
}

} // namespace

TEST_CASE("check on 100 000 leak sites holds only the stacks it shows") {
    // Every allocation leaks from its own 16-frame stack. Memory must follow what is
    // shown (--top sites), not the sites in the trace: the sites cost their counters,
    // not symbolized stacks.
    constexpr uint32_t kSites = 100'000;
    TempDir dir;
    auto b = standardTrace();
    b.module({0x400000, 0x400000, 0x40000000, "/nonexistent/app", ""});
    std::vector<uint64_t> frames(16);
    for (uint32_t i = 0; i < kSites; ++i) {
        for (size_t f = 0; f < frames.size(); ++f) {
            frames[f] = 0x400000 + (uint64_t{i} * 16 + f) * 16;
        }
        b.stack(10 + i, frames);
        b.event(Ev::alloc(10 + i, B + uint64_t{i} * 0x1000, 256, Api::cudaMalloc, Kind::Device,
                          10 + i));
        if (i % 4096 == 0) {
            b.endFrame();
        }
    }
    b.trailer(kSites + 20);
    const std::string path = b.write(dir.file("t.gmtrace"));
    int status = -1;
    const long kib = peakRssKiB({GMT_CLI, "check", path}, status);
    INFO("peak RSS " << kib / 1024 << " MiB");
    CHECK(status == 1);
    // The trace alone holds 100 000 stacks of 16 addresses (13 MiB as kept by the
    // analysis); before only the shown stacks were materialized, check took 1.2 GB here.
    CHECK(kib < 300 * 1024);
    // The same with suppressions: every site is matched, none is kept.
    const std::string supp = dir.file("s.supp");
    std::ofstream(supp) << "leak:no_such_function\n";
    const long with_supp = peakRssKiB({GMT_CLI, "check", "--suppressions", supp, path}, status);
    INFO("with suppressions: peak RSS " << with_supp / 1024 << " MiB");
    CHECK(status == 1);
    CHECK(with_supp < 300 * 1024);
}

TEST_CASE("check --phase and report --phase on a trace with phases") {
    TempDir dir;
    auto b = standardTrace();
    b.event(Ev::alloc(5, B, 40 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.phase(10, "train");
    b.event(Ev::alloc(11, B + 0x10000000, 100 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::free(12, B + 0x10000000));
    b.event(Ev::alloc(13, B + 0x20000000, 8 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.phase(20, "eval");
    b.event(Ev::alloc(21, B + 0x30000000, 1 * MiB, Api::cudaMalloc, Kind::Device, 3));
    b.event(Ev::free(22, B + 0x30000000));
    b.trailer(30);
    const auto path = b.write(dir.file("t.gmtrace"));
    const std::string check = "check --no-symbols " + path + " --phase ";

    auto r = runCommand(cli(check + "train --max-peak-bytes 140M --max-leaked-bytes 8M"));
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("ok   phase: phase train: marked 1 time") &&
                          Catch::Contains("8.0 MiB leaked in phase train") &&
                          Catch::Contains("140.0 MiB of device memory at the peak of phase train"));
    r = runCommand(cli(check + "train --max-peak-bytes 139M --max-leaked-bytes 8M"));
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("FAIL peak"));
    r = runCommand(cli(check + "train --max-leaked-bytes 7M --max-peak-bytes 1G"));
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("FAIL leaks"));
    // eval leaked nothing and peaked at 49 MiB; the run leaked 48 MiB and peaked at 140.
    r = runCommand(cli(check + "eval --max-peak-bytes 49M"));
    CHECK(r.status == 0);
    r = runCommand(cli(check + "warmup"));
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("phase warmup was never marked") &&
                          Catch::Contains("phases marked: train, eval"));

    auto json = runCommand(cli("report --no-symbols --format json --phase train " + path));
    REQUIRE(json.status == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["leak_scope"]["phase"] == "train");
    CHECK(j["leak_scope"]["bytes"] == 8 * MiB);
    REQUIRE(j["leaks"].size() == 1);
    CHECK(j["leaks"][0]["bytes"] == 8 * MiB);
    CHECK(j["summary"]["leaked_bytes"] == 48 * MiB);
    REQUIRE(j["phases"].size() == 2);
    CHECK(j["phases"][0]["peak_bytes"] == 140 * MiB);
    CHECK(reportSchema().validate(j).empty());
    auto text = runCommand(cli("report --no-symbols " + path));
    CHECK_THAT(
        text.out,
        Catch::Contains("Phases (gpumemtrace_mark_phase, gpumemtrace_push_phase, NVTX ranges)") &&
            Catch::Contains("train"));
}
