// Python in the typed report: a trace's Python frames resolved and merged into the stacks
// every view reads, and what the report says of each process's CPython.
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using analyzer::FrameLanguage;
using format::PythonStatus;

namespace {

constexpr uint64_t B = 0x7f0000000000;

format::PythonCodeInfo code(uint32_t id, const std::string& name, int first_line) {
    format::PythonCodeInfo c;
    c.id = id;
    c.first_line = first_line;
    c.filename = "/srv/" + name + ".py";
    c.name = name;
    // Code units 0-1 on the first line, 2-3 one line further (one-line-delta form).
    c.line_table = std::string("\x81\x00\x00\xd9\x00\x00", 6);
    return c;
}

TraceBuilder pythonTrace(PythonStatus at_start, bool with_trailer,
                         std::optional<PythonStatus> at_end = std::nullopt) {
    auto h = TraceBuilder::defaultHeader();
    h.python_version = 0x030c03f0;
    h.python_status = at_start;
    auto b = standardTrace(1, h);
    b.pythonCode(code(7, "step", 10));
    b.pythonCode(code(8, "main", 50));
    // Native 0x402000 and 0x404000 were evaluation frames: step and main ran in the first,
    // a frame of code 9 (no record) in the second; one more past the native frames.
    b.stack(4, {0x401000, 0x402000, 0x403000, 0x404000},
            {{7, 2, 1}, {8, 0, 1}, {9, 0, 3}, {8, 3, 4}});
    b.event(Ev::alloc(10, B, 4096, format::Api::cudaMalloc, format::Kind::Device, 4));
    if (with_trailer) {
        format::TrailerInfo t;
        t.events = 1;
        t.end_mono_ns = 20;
        t.python_status = at_end.value_or(at_start);
        b.trailer(t);
    }
    return b;
}

} // namespace

TEST_CASE("Python frames reach the report's stacks in place of their evaluation frames",
          "[python]") {
    auto b = pythonTrace(PythonStatus::Captured, true);
    const analyzer::Report r = report(b);
    REQUIRE(r.leaks.size() == 1);
    const analyzer::Stack& s = r.leaks[0].stack;
    REQUIRE(s.size() == 6);
    CHECK(s[0].language == FrameLanguage::Native);
    CHECK(s[0].address == 0x401000);
    CHECK(s[1].language == FrameLanguage::Python);
    CHECK(s[1].function == "step");
    CHECK(s[1].file == "/srv/step.py");
    CHECK(s[1].line == 11); // instruction 2: the second entry
    CHECK(s[1].address == 0);
    CHECK_FALSE(s[1].offset);
    CHECK(s[2].function == "main");
    CHECK(s[2].line == 50);
    CHECK(s[3].address == 0x403000);
    // A frame whose code record is missing is named, not dropped.
    CHECK(s[4].language == FrameLanguage::Python);
    CHECK(s[4].function == "<unknown code 9>");
    CHECK(s[4].line == 0);
    // Past the native frames (the unwinder stopped before its evaluation frame).
    CHECK(s[5].function == "main");
    CHECK(s[5].line == 51);
    // The peak's site has the same stack.
    REQUIRE(r.peak.top_sites.size() == 1);
    CHECK(r.peak.top_sites[0].stack.size() == 6);
}

TEST_CASE("the report says which CPython each process ran and what became of its frames",
          "[python]") {
    auto captured = pythonTrace(PythonStatus::Captured, true);
    auto r = report(captured);
    REQUIRE(r.processes[0].python);
    CHECK(r.processes[0].python->version == "3.12.3");
    CHECK(r.processes[0].python->status == PythonStatus::Captured);

    // The trailer's status is the one at the end.
    auto failed = pythonTrace(PythonStatus::Captured, true, PythonStatus::Failed);
    CHECK(report(failed).processes[0].python->status == PythonStatus::Failed);

    // No trailer: "pending" at the start, but the stacks have Python frames.
    auto killed = pythonTrace(PythonStatus::Pending, false);
    CHECK(report(killed).processes[0].python->status == PythonStatus::Captured);

    // Pending to the end and no Python frame in any stack.
    auto h = TraceBuilder::defaultHeader();
    h.python_version = 0x030b02f0;
    h.python_status = PythonStatus::Pending;
    auto pending = standardTrace(1, h);
    pending.event(Ev::alloc(10, B, 4096));
    pending.trailer(20);
    r = report(pending);
    CHECK(r.processes[0].python->version == "3.11.2");
    CHECK(r.processes[0].python->status == PythonStatus::Pending);

    // No CPython: nothing to say.
    auto plain = standardTrace();
    plain.event(Ev::alloc(10, B, 4096));
    plain.trailer(20);
    CHECK_FALSE(report(plain).processes[0].python);
}

TEST_CASE("a stack id written again takes its new frames, Python ones included", "[python]") {
    auto b = pythonTrace(PythonStatus::Captured, false);
    b.stack(4, {0x401000, 0x402000});
    b.event(Ev::alloc(11, B + 8192, 4096, format::Api::cudaMalloc, format::Kind::Device, 4));
    const analyzer::Report r = report(b);
    for (const analyzer::LeakSite& l : r.leaks) {
        for (const analyzer::Frame& f : l.stack) {
            CHECK(f.language == FrameLanguage::Native);
        }
    }
}
