// Phases marked with gpumemtrace_mark_phase(): per phase name, allocations made, frees,
// the process's peak while it was current and the bytes it leaked.
#include "report/report_json.h"
#include "report_fixture.h"
#include "support/json_schema.h"

#include <fstream>

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {

constexpr uint64_t B = 0x7f0000000000;

const analyzer::PhaseReport& phase(const analyzer::Report& r, const std::string& name) {
    for (const auto& p : r.phases) {
        if (p.name == name) {
            return p;
        }
    }
    throw std::logic_error("no phase " + name);
}

// load (t 10): 40 MiB kept for good (leaked); warmup (t 20): 10 MiB freed;
// train (t 30, again t 60): 100 MiB then 8 MiB leaked per occurrence; eval (t 50): 1 MiB.
TraceBuilder phasedTrace() {
    auto b = standardTrace();
    b.event(Ev::alloc(5, B, 40 * MiB, Api::cudaMalloc, Kind::Device, 1)); // before any phase
    b.phase(20, "warmup");
    b.event(Ev::alloc(21, B + 0x10000000, 10 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::free(22, B + 0x10000000));
    b.phase(30, "train");
    b.event(Ev::alloc(31, B + 0x20000000, 100 * MiB, Api::cudaMalloc, Kind::Device, 3));
    b.event(Ev::free(32, B + 0x20000000));
    b.event(Ev::alloc(33, B + 0x30000000, 8 * MiB, Api::cudaMalloc, Kind::Device, 3));
    b.phase(50, "eval");
    b.event(Ev::alloc(51, B + 0x40000000, 1 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::free(52, B + 0x40000000));
    b.phase(60, "train");
    b.event(Ev::alloc(61, B + 0x50000000, 8 * MiB, Api::cudaMalloc, Kind::Device, 3));
    b.trailer(100);
    return b;
}

} // namespace

TEST_CASE("phases: allocations - peak and leaks per phase name") {
    auto b = phasedTrace();
    auto r = report(b);
    REQUIRE(r.phases.size() == 3);
    CHECK(r.phases[0].name == "warmup");
    CHECK(r.phases[0].pid == 4242);

    const auto& warmup = phase(r, "warmup");
    CHECK(warmup.occurrences == 1);
    CHECK(warmup.first_time_ns == 20);
    CHECK(warmup.duration_ns == 10);
    CHECK(warmup.allocations == 1);
    CHECK(warmup.allocated_bytes == 10 * MiB);
    CHECK(warmup.frees == 1);
    CHECK(warmup.peak_bytes == 50 * MiB); // 40 held from before + its 10
    CHECK(warmup.peak_time_ns == 21);
    CHECK(warmup.leaked_bytes == 0);

    const auto& train = phase(r, "train");
    CHECK(train.occurrences == 2);
    CHECK(train.first_time_ns == 30);
    CHECK(train.duration_ns == 20 + 40); // 30..50 and 60..100 (the process's end)
    CHECK(train.allocations == 3);
    CHECK(train.allocated_bytes == 116 * MiB);
    CHECK(train.frees == 1);
    CHECK(train.peak_bytes == 140 * MiB);
    CHECK(train.peak_time_ns == 31);
    CHECK(train.leaked_bytes == 16 * MiB);
    CHECK(train.leaked_allocations == 2);

    const auto& eval = phase(r, "eval");
    CHECK(eval.peak_bytes == 49 * MiB); // 40 + 8 held, + its 1
    CHECK(eval.leaked_bytes == 0);

    // The leak before any phase is in no phase; totals are unchanged by phases.
    CHECK(r.summary.leaked_bytes == 56 * MiB);
    // Phase markers stay listed on the process, in order.
    REQUIRE(r.processes[0].phases.size() == 4);
    CHECK(r.processes[0].phases[3].name == "train");
    CHECK(r.processes[0].phases[3].time_ns == 60);
}

TEST_CASE("phases: the leak list of one phase") {
    auto b = phasedTrace();
    analyzer::ReportOptions o;
    o.phase = "train";
    auto r = report(b, o);
    CHECK(r.leak_scope.phase == "train");
    CHECK(r.leak_scope.bytes == 16 * MiB);
    CHECK(r.leak_scope.allocations == 2);
    CHECK(r.leak_scope.sites == 1);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].bytes == 16 * MiB); // both occurrences' leaks: one site
    CHECK(r.leaks[0].stack_id == 3);
    CHECK(r.summary.leaked_bytes == 56 * MiB);

    o.phase = "never";
    auto none = report(b, o);
    CHECK(none.leaks.empty());
    CHECK(none.leak_scope.bytes == 0);
}

TEST_CASE("phases: a site leaking in several phases is one leak row") {
    auto b = standardTrace();
    b.phase(1, "a");
    b.event(Ev::alloc(2, B, 100, Api::cudaMalloc, Kind::Device, 1));
    b.phase(3, "b");
    b.event(Ev::alloc(4, B + 0x1000, 200, Api::cudaMalloc, Kind::Device, 1));
    b.trailer(5);
    auto r = report(b);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].bytes == 300);
    CHECK(r.leaks[0].allocations == 2);
    CHECK(r.summary.leak_groups == 1);
    CHECK(phase(r, "a").leaked_bytes == 100);
    CHECK(phase(r, "b").leaked_bytes == 200);
}

TEST_CASE("phases: names past the cap share one entry") {
    auto b = standardTrace();
    for (uint64_t i = 0; i < 30; ++i) {
        b.phase(10 + i * 10, "step " + std::to_string(i));
        b.event(Ev::alloc(11 + i * 10, B + i * 0x1000, 100, Api::cudaMalloc, Kind::Device, 1));
    }
    b.trailer(1000);
    TempDir dir;
    analyzer::AnalysisOptions ao;
    ao.max_listed = 20;
    analyzer::Analysis analysis(ao);
    analyzer::analyzeTraces({b.write(dir.file("t.gmtrace"))}, analysis);
    analyzer::ReportOptions o;
    o.symbols = false;
    auto r = analyzer::makeReport(analysis, o);
    REQUIRE(r.phases.size() == 21);
    CHECK(r.phases.back().name == analyzer::kOtherPhases);
    CHECK(r.phases.back().occurrences == 10);
    CHECK(r.phases.back().leaked_bytes == 1000);
    CHECK(r.processes[0].phases.size() == 20); // markers listed: capped
}

// The phase a report is scoped to keeps its figures past the cap, with the phases nested
// in it (a pytest run pushes one phase per test: the 1001st test's check must find its own).
TEST_CASE("phases: the scoped phase and its nested phases keep their names past the cap") {
    auto b = standardTrace();
    for (uint64_t i = 0; i < 30; ++i) {
        b.push(10 + i * 10, "test " + std::to_string(i));
        if (i == 25) {
            b.push(12 + i * 10, "inner");
            b.event(Ev::alloc(13 + i * 10, B + i * 0x1000, 100, Api::cudaMalloc, Kind::Device, 1));
            b.pop(14 + i * 10);
        }
        b.pop(15 + i * 10);
    }
    b.trailer(1000);
    TempDir dir;
    const std::string trace = b.write(dir.file("t.gmtrace"));
    analyzer::ReportOptions o;
    o.symbols = false;
    o.phase = "test 25";
    analyzer::AnalysisOptions ao;
    ao.max_listed = 20;
    ao.phase = o.phase;
    analyzer::Analysis analysis(ao);
    analyzer::analyzeTraces({trace}, analysis);
    auto r = analyzer::makeReport(analysis, o);
    CHECK(phase(r, "test 25").occurrences == 1);
    CHECK(phase(r, "inner").path == std::vector<std::string>{"test 25", "inner"});
    CHECK(phase(r, "inner").leaked_bytes == 100);
    CHECK(r.leak_scope.bytes == 100);
    CHECK(phase(r, analyzer::kOtherPhases).occurrences == 9); // tests 20-29 but 25

    // Through the path `check` takes (the analysis options follow the report's).
    auto checked = analyzer::reportOfTraces({trace}, o);
    CHECK(phase(checked, "test 25").occurrences == 1);
    CHECK(checked.leak_scope.bytes == 100);
}

// Nested phases: a test pushed around a loop that marks its steps (as the pytest plugin
// and NVTX ranges do).
TEST_CASE("phases: pushed phases nest - marks inside them are their children") {
    auto b = standardTrace();
    b.event(Ev::alloc(5, B, 10 * MiB, Api::cudaMalloc, Kind::Device, 1)); // held throughout
    b.push(10, "test_a");
    b.phase(11, "step", format::PhaseKind::Mark, 100);
    b.event(Ev::alloc(12, B + 0x10000000, 4 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.phase(13, "step", format::PhaseKind::Mark, 100);
    b.event(Ev::alloc(14, B + 0x20000000, 4 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::free(15, B + 0x10000000));
    b.pop(20);
    b.push(30, "test_b");
    b.event(Ev::alloc(31, B + 0x30000000, 1 * MiB, Api::cudaMalloc, Kind::Device, 3));
    b.event(Ev::free(32, B + 0x30000000));
    b.phase(33, "step", format::PhaseKind::Mark, 100);
    b.pop(40);
    b.pop(41); // nothing pushed: ignored
    b.event(Ev::alloc(50, B + 0x40000000, 2 * MiB, Api::cudaMalloc, Kind::Device, 3));
    b.trailer(60);
    auto r = report(b);
    // test_a, its step, test_b, its step: two "step" phases, one per parent.
    REQUIRE(r.phases.size() == 4);
    const auto& a = r.phases[0];
    CHECK(a.name == "test_a");
    CHECK(a.path == std::vector<std::string>{"test_a"});
    CHECK(a.occurrences == 1);
    CHECK(a.duration_ns == 10);
    CHECK(a.allocations == 0); // its steps made them
    CHECK(a.peak_bytes == 18 * MiB);
    CHECK(a.peak_above_start_bytes == 8 * MiB);
    CHECK(a.peak_above_start_time_ns == 14); // the second 4 MiB, before the free at 15
    const auto& a_step = r.phases[1];
    CHECK(a_step.path == std::vector<std::string>{"test_a", "step"});
    CHECK(a_step.occurrences == 2);
    CHECK(a_step.duration_ns == 9); // 11..20: the pop of test_a ends its step too
    CHECK(a_step.allocations == 2);
    CHECK(a_step.leaked_bytes == 4 * MiB);
    const auto& tb = r.phases[2];
    CHECK(tb.path == std::vector<std::string>{"test_b"});
    CHECK(tb.allocations == 1);
    CHECK(tb.peak_above_start_bytes == 1 * MiB);
    CHECK(tb.peak_above_start_time_ns == 31);
    CHECK(r.phases[3].path == std::vector<std::string>{"test_b", "step"});

    // After the last pop no phase is current: the last allocation is in none.
    CHECK(r.summary.leaked_bytes == 16 * MiB);
    CHECK(a.leaked_bytes + a_step.leaked_bytes + tb.leaked_bytes + r.phases[3].leaked_bytes ==
          4 * MiB);

    // --phase test_a covers what its nested steps leaked; test_b leaked nothing.
    analyzer::ReportOptions o;
    o.phase = "test_a";
    auto in_a = report(b, o);
    CHECK(in_a.leak_scope.bytes == 4 * MiB);
    REQUIRE(in_a.leaks.size() == 1);
    CHECK(in_a.leaks[0].stack_id == 2);
    o.phase = "test_b";
    CHECK(report(b, o).leak_scope.bytes == 0);
}

TEST_CASE("phases: pushes nest per thread - a mark of another thread stays at the base") {
    auto b = standardTrace();
    b.phase(1, "train"); // thread 0 (no tid: an older trace's marks)
    b.push(2, "step", 7);
    b.event(Ev::alloc(3, B, 1 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.pop(4, 7);
    b.phase(5, "eval");
    b.trailer(10);
    auto r = report(b);
    REQUIRE(r.phases.size() == 3);
    CHECK(r.phases[0].path == std::vector<std::string>{"train"});
    // A push at a thread's base level is nested in the marked phase it interrupts.
    CHECK(r.phases[1].path == std::vector<std::string>{"train", "step"});
    CHECK(r.phases[1].leaked_bytes == 1 * MiB);
    CHECK(r.phases[0].peak_bytes == 1 * MiB); // its nested step's allocation counts
    CHECK(r.phases[0].duration_ns == 4);
    CHECK(r.phases[2].path == std::vector<std::string>{"eval"});
}

TEST_CASE("phases: each record listed with its kind, thread and path - a pop names what it ended") {
    auto b = standardTrace();
    b.push(10, "step", 7);
    b.push(11, "forward", 7);
    b.phase(12, "inner", format::PhaseKind::Mark, 7); // inside forward
    b.pop(13, 7);                                     // ends forward (and inner)
    b.pop(14, 7);                                     // ends step
    b.pop(15, 7);                                     // nothing pushed
    b.phase(16, "eval");                              // thread 0, top level
    b.trailer(20);
    auto r = report(b);
    using K = format::PhaseKind;
    struct Want {
        uint64_t time_ns;
        K kind;
        uint64_t tid;
        std::vector<std::string> path;
    };
    const std::vector<Want> want = {{10, K::Push, 7, {"step"}},
                                    {11, K::Push, 7, {"step", "forward"}},
                                    {12, K::Mark, 7, {"step", "forward", "inner"}},
                                    {13, K::Pop, 7, {"step", "forward"}},
                                    {14, K::Pop, 7, {"step"}},
                                    {15, K::Pop, 7, {}},
                                    {16, K::Mark, 0, {"eval"}}};
    const auto check = [&](const std::vector<analyzer::PhaseMarker>& got) {
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            CAPTURE(i);
            CHECK(got[i].time_ns == want[i].time_ns);
            CHECK(got[i].kind == want[i].kind);
            CHECK(got[i].tid == want[i].tid);
            CHECK(got[i].path == want[i].path);
            CHECK(got[i].name == (want[i].path.empty() ? "" : want[i].path.back()));
        }
    };
    check(r.processes[0].phases);
    // Saved and read back the same; a report saved before phases nested reads as marks.
    auto json = analyzer::toJson(r);
    std::ifstream f(GMT_REPORT_SCHEMA);
    const auto errors = SchemaValidator(nlohmann::json::parse(f)).validate(json);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());
    check(analyzer::fromJson(json).processes[0].phases);
    for (auto& m : json["processes"][0]["phases"]) {
        m.erase("kind");
        m.erase("tid");
        m.erase("path");
    }
    const auto old = analyzer::fromJson(json).processes[0].phases;
    CHECK(old[1].kind == K::Mark);
    CHECK(old[1].path == std::vector<std::string>{"forward"});
}

TEST_CASE("a report read up to a time: what was live then, in the phase's leak scope") {
    // What `check` reads again to list what held a phase's peak increase
    // (ReportOptions::until_ns): the live set at that moment is the leak list.
    auto b = standardTrace();
    b.event(Ev::alloc(5, B, 10 * MiB, Api::cudaMalloc, Kind::Device, 1)); // before the test
    b.push(10, "test_a");
    b.event(Ev::alloc(12, B + 0x10000000, 4 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::alloc(14, B + 0x20000000, 3 * MiB, Api::cudaMalloc, Kind::Device, 3));
    b.event(Ev::free(15, B + 0x10000000));
    b.event(Ev::free(16, B + 0x20000000));
    b.pop(20);
    b.trailer(60);
    analyzer::ReportOptions whole;
    whole.phase = "test_a";
    const auto all = report(b, whole);
    REQUIRE(all.phases.size() == 1);
    CHECK(all.phases[0].peak_above_start_bytes == 7 * MiB);
    CHECK(all.phases[0].peak_above_start_time_ns == 14);
    CHECK(all.leaks.empty()); // the test freed both
    analyzer::ReportOptions then = whole;
    then.until_ns = all.phases[0].peak_above_start_time_ns;
    const auto at = report(b, then);
    // Live at 14 and made in the phase: both buffers, the larger first; not the 10 MiB
    // allocated before the phase began.
    REQUIRE(at.leaks.size() == 2);
    CHECK(at.leaks[0].bytes == 4 * MiB);
    CHECK(at.leaks[0].stack_id == 2);
    CHECK(at.leaks[1].bytes == 3 * MiB);
    CHECK(at.leak_scope.bytes == 7 * MiB);
    then.until_ns = 15; // after the first free
    CHECK(report(b, then).leak_scope.bytes == 3 * MiB);
}
