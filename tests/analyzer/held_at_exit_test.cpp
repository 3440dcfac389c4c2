// Memory a caching allocator still holds at exit is its cache, not a leak
// (docs/analysis.md, "Held by a caching allocator at exit"): the table that recognises
// allocators by their allocation stacks, and what the report makes of it.
#include "report_fixture.h"

#include "analysis/caching/caching_allocators.h"
#include "report/report_json.h"

#include <catch2/catch.hpp>
#include <sstream>

using namespace gmt;
using namespace gmt::test;
using analyzer::CachingAllocatorTable;
using format::Api;
using format::Kind;

namespace {

constexpr uint64_t B = 0x7f0000000000;

format::PythonCodeInfo code(uint32_t id, const std::string& name, const std::string& file) {
    format::PythonCodeInfo c;
    c.id = id;
    c.first_line = 10;
    c.filename = file;
    c.name = name;
    c.line_table = std::string("\x81\x00\x00\xd9\x00\x00", 6);
    return c;
}

// Stack 4 allocates through CuPy's pool (its Cython method, seen as a frame named after it),
// stack 5 from the program's own code, stack 6 through a user-named pool.
TraceBuilder poolTrace() {
    auto b = standardTrace();
    b.pythonCode(code(7, "SingleDeviceMemoryPool._malloc", "/site/cupy/cuda/memory.pyx"));
    b.pythonCode(code(8, "train_step", "/srv/train.py"));
    b.pythonCode(code(9, "Arena.grow", "/srv/arena.py"));
    b.stack(4, {0x401000, 0x402000}, {{7, 0, 1}, {8, 0, 2}});
    b.stack(5, {0x401000, 0x402000}, {{8, 2, 1}});
    b.stack(6, {0x401000, 0x402000}, {{9, 0, 1}, {8, 0, 2}});
    b.event(Ev::alloc(1, B, 8 * MiB, Api::cudaMalloc, Kind::Device, 4));
    b.event(Ev::alloc(2, B + 8 * MiB, 8 * MiB, Api::cudaMalloc, Kind::Device, 4));
    b.event(Ev::alloc(3, B + 16 * MiB, 1 * MiB, Api::cudaMalloc, Kind::Device, 5));
    b.event(Ev::alloc(4, B + 18 * MiB, 2 * MiB, Api::cudaMalloc, Kind::Device, 5));
    b.event(Ev::free(5, B + 18 * MiB));
    b.event(Ev::alloc(6, B + 20 * MiB, 4 * MiB, Api::cudaMalloc, Kind::Device, 6));
    b.trailer(10);
    return b;
}

std::shared_ptr<const CachingAllocatorTable> tableWith(const std::string& lines) {
    auto t = std::make_shared<CachingAllocatorTable>(*CachingAllocatorTable::builtin());
    std::istringstream in(lines);
    t->extend(analyzer::patternLines(in, "pools.txt"));
    return t;
}

} // namespace

TEST_CASE("what a caching allocator holds at exit is held, not leaked") {
    auto b = poolTrace();
    const analyzer::Report r = report(b);
    REQUIRE(r.leaks.size() == 2);
    CHECK(r.summary.leaked_bytes == 5 * MiB);
    CHECK(r.summary.leaked_allocations == 2);
    CHECK(r.leak_scope.bytes == 5 * MiB);
    CHECK(r.summary.held_at_exit_bytes == 16 * MiB);
    CHECK(r.summary.held_at_exit_allocations == 2);
    REQUIRE(r.held_at_exit.size() == 1);
    const analyzer::HeldReport& h = r.held_at_exit[0];
    CHECK(h.allocator == "CuPy memory pool");
    CHECK(h.pid == 4242);
    CHECK(h.bytes == 16 * MiB);
    CHECK(h.allocations == 2);
    CHECK(h.sites == 1);
    REQUIRE(h.top_sites.size() == 1);
    CHECK(h.top_sites[0].api == "cudaMalloc");
    CHECK(h.top_sites[0].stack_id == 4);
    CHECK(h.top_sites[0].stack.size() == 3); // native 0x401000, two Python frames
    // The device and the process count only the leaks.
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].leaked_bytes == 5 * MiB);
    CHECK(r.processes[0].leaked_bytes == 5 * MiB);
    CHECK(kindOf(r, Kind::Device).leaked_bytes == 5 * MiB);
    // The peak still counts what the cache held: it was device memory in use.
    CHECK(r.summary.peak_bytes == 21 * MiB);
}

TEST_CASE("without a table (check --count-cached) held memory is leaked again") {
    auto b = poolTrace();
    analyzer::ReportOptions options;
    options.caching_allocators = nullptr;
    const analyzer::Report r = report(b, options);
    CHECK(r.summary.leaked_bytes == 21 * MiB);
    CHECK(r.leaks.size() == 3);
    CHECK(r.held_at_exit.empty());
    CHECK(r.summary.held_at_exit_bytes == 0);
}

TEST_CASE("a user's table adds allocators, replaces built-in patterns and drops entries") {
    auto b = poolTrace();
    analyzer::ReportOptions options;
    options.caching_allocators = tableWith("# the arena of train.py\n"
                                           "arena: Arena.grow\n"
                                           "arena: /srv/arena.py:*\n");
    analyzer::Report r = report(b, options);
    REQUIRE(r.held_at_exit.size() == 2);
    CHECK(r.held_at_exit[0].allocator == "CuPy memory pool");
    CHECK(r.held_at_exit[1].allocator == "arena");
    CHECK(r.held_at_exit[1].bytes == 4 * MiB);
    CHECK(r.summary.leaked_bytes == 1 * MiB);

    // A user entry comes before the built-in ones: it claims a stack both match.
    options.caching_allocators = tableWith("mine: train_step\n");
    r = report(b, options);
    REQUIRE(r.held_at_exit.size() == 1);
    CHECK(r.held_at_exit[0].allocator == "mine");
    CHECK(r.held_at_exit[0].bytes == 21 * MiB);

    // Named like a built-in entry: its patterns replace the built-in ones.
    options.caching_allocators = tableWith("CuPy memory pool: Arena.grow\n");
    r = report(b, options);
    REQUIRE(r.held_at_exit.size() == 1);
    CHECK(r.held_at_exit[0].allocator == "CuPy memory pool");
    CHECK(r.held_at_exit[0].bytes == 4 * MiB);

    options.caching_allocators = tableWith("-CuPy memory pool\n");
    r = report(b, options);
    CHECK(r.held_at_exit.empty());
    CHECK(r.summary.leaked_bytes == 21 * MiB);
}

TEST_CASE("the caching allocator table: every built-in entry says why, bad lines are named") {
    const auto builtin = CachingAllocatorTable::builtin();
    REQUIRE(builtin->entries().size() >= 5);
    for (const analyzer::CachingAllocator& e : builtin->entries()) {
        CHECK_FALSE(e.why.empty());
        CHECK_FALSE(e.patterns.empty());
        CHECK(e.origin == "built-in");
    }
    // The printed table is a table file: read back, it is the same table.
    CachingAllocatorTable empty;
    std::istringstream in(builtin->text());
    empty.extend(analyzer::patternLines(in, "printed"));
    REQUIRE(empty.entries().size() == builtin->entries().size());
    for (size_t i = 0; i < empty.entries().size(); ++i) {
        CHECK(empty.entries()[i].name == builtin->entries()[i].name);
        CHECK(empty.entries()[i].patterns == builtin->entries()[i].patterns);
    }
    CHECK_THROWS_WITH(tableWith("\n\nno pattern here\n"),
                      Catch::Contains("pools.txt:3: expected 'NAME: PATTERN' or '-NAME'"));
    CHECK_THROWS_WITH(tableWith("name: \n"), Catch::Contains("pools.txt:1:"));
    CHECK_THROWS_WITH(tableWith("-Nobody's pool\n"),
                      Catch::Contains("pools.txt:1: no caching allocator named 'Nobody's pool'"));
}

TEST_CASE("held memory in JSON: valid against the schema, read back as written") {
    auto b = poolTrace();
    const analyzer::Report r = report(b);
    const auto j = analyzer::toJson(r);
    auto errors = reportSchema().validate(j);
    INFO((errors.empty() ? "" : errors[0]));
    CHECK(errors.empty());
    CHECK(j["summary"]["held_at_exit_bytes"] == 16 * MiB);
    CHECK(j["held_at_exit"][0]["allocator"] == "CuPy memory pool");
    const analyzer::Report back = analyzer::fromJson(j);
    CHECK(analyzer::toJson(back) == j);
    // A report saved before held memory existed reads as holding nothing.
    auto old = j;
    old.erase("held_at_exit");
    old["summary"].erase("held_at_exit_bytes");
    old["summary"].erase("held_at_exit_allocations");
    const analyzer::Report older = analyzer::fromJson(old);
    CHECK(older.held_at_exit.empty());
    CHECK(older.summary.held_at_exit_bytes == 0);
}

// ---- The leak policy (analyzer/report/leak_policy.h): each class, and a saved report
// judged again giving what the trace gives ----

namespace {

using analyzer::LeakPolicy;
using analyzer::Report;

// One trace, reported with different options: the same file, so the reports differ only
// in what the options change.
struct OneTrace {
    TempDir dir;
    std::string path;

    explicit OneTrace(TraceBuilder b) : path(b.write(dir.file("t.gmtrace"))) {}

    Report with(analyzer::ReportOptions options) const {
        options.symbols = false;
        return reportOf({path}, options);
    }
};

// What `report --format json` saved, read back as `check` and `diff` read it.
Report saved(const Report& r) {
    return analyzer::fromJson(analyzer::toJson(r));
}

// The policy a trace's report options describe, for the saved report.
Report judgedAgain(Report r, const analyzer::ReportOptions& options) {
    analyzer::judgeSavedLeaks(r, analyzer::leakPolicy(options));
    return r;
}

// Every figure the policy decides, as JSON (the processes by their leaked bytes only).
void requireSameLeakFigures(const Report& trace, const Report& judged) {
    const analyzer::Json a = analyzer::toJson(trace);
    const analyzer::Json b = analyzer::toJson(judged);
    for (const char* field :
         {"summary", "leak_scope", "leaks", "held_at_exit", "kinds", "devices", "phases"}) {
        INFO(field);
        CHECK(a[field] == b[field]);
    }
    REQUIRE(trace.processes.size() == judged.processes.size());
    for (size_t i = 0; i < trace.processes.size(); ++i) {
        CHECK(trace.processes[i].leaked_bytes == judged.processes[i].leaked_bytes);
    }
}

bool runsThrough(const analyzer::LeakSite& site, const std::string& function) {
    return std::any_of(site.stack.begin(), site.stack.end(),
                       [&](const analyzer::Frame& f) { return f.function == function; });
}

} // namespace

TEST_CASE("the leak policy: held by an allocator, leaked, or suppressed") {
    OneTrace t(poolTrace());
    analyzer::ReportOptions options;
    options.leak_filter = [](const analyzer::LeakSite& site) {
        return runsThrough(site, "Arena.grow");
    };
    const Report r = t.with(options);
    // Held: the CuPy pool's 16 MiB, in no leaked figure.
    CHECK(r.summary.held_at_exit_bytes == 16 * MiB);
    REQUIRE(r.held_at_exit.size() == 1);
    // Suppressed: the arena's 4 MiB leaves the scope, its list and every leaked figure.
    CHECK(r.leak_scope.suppressed_bytes == 4 * MiB);
    CHECK(r.leak_scope.suppressed_allocations == 1);
    CHECK(r.leak_scope.suppressed_sites == 1);
    CHECK(r.summary.leaked_bytes == 1 * MiB);
    CHECK(r.summary.leaked_allocations == 1);
    CHECK(r.summary.leak_groups == 1);
    REQUIRE(r.processes.size() == 1);
    CHECK(r.processes[0].leaked_bytes == 1 * MiB);
    uint64_t device_leaked = 0;
    for (const analyzer::DeviceReport& d : r.devices) {
        device_leaked += d.leaked_bytes;
    }
    uint64_t kind_leaked = 0;
    for (const analyzer::KindReport& k : r.kinds) {
        kind_leaked += k.leaked_bytes;
    }
    CHECK(device_leaked == 1 * MiB);
    CHECK(kind_leaked == 1 * MiB);
    // Leaked: the program's own 1 MiB.
    CHECK(r.leak_scope.bytes == 1 * MiB);
    CHECK(r.leak_scope.sites == 1);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].stack_id == 5);

    // A block is the program's tensor: never held, whatever its stack runs through.
    const LeakPolicy policy;
    const analyzer::Stack pool = r.held_at_exit[0].top_sites[0].stack;
    CHECK(policy.heldBy(Kind::Device, pool) != nullptr);
    CHECK(policy.heldBy(Kind::Block, pool) == nullptr);
    CHECK(LeakPolicy{nullptr, {}, 10}.heldBy(Kind::Device, pool) == nullptr);
}

TEST_CASE("a saved report judged again gives what its trace gives, with any options") {
    OneTrace t(poolTrace());
    analyzer::ReportOptions builtin;
    analyzer::ReportOptions count_cached;
    count_cached.caching_allocators = nullptr;
    analyzer::ReportOptions arena;
    arena.caching_allocators = tableWith("arena: Arena.grow\n");
    analyzer::ReportOptions mine;
    mine.caching_allocators = tableWith("mine: train_step\n");
    analyzer::ReportOptions no_cupy;
    no_cupy.caching_allocators = tableWith("-CuPy memory pool\n");
    analyzer::ReportOptions suppressing = arena;
    suppressing.leak_filter = [](const analyzer::LeakSite& site) {
        return runsThrough(site, "train_step") && site.bytes < 2 * MiB;
    };
    const std::vector<std::pair<const char*, analyzer::ReportOptions>> all{
        {"built-in table", builtin},  {"--count-cached", count_cached},
        {"an added entry", arena},    {"an entry claiming all", mine},
        {"a dropped entry", no_cupy}, {"a suppression", suppressing}};
    for (const auto& [saved_with, saving] : all) {
        if (saving.leak_filter) {
            continue; // `report` saves without suppressions
        }
        const Report s = saved(t.with(saving));
        for (const auto& [judged_with, judging] : all) {
            INFO("saved with " << saved_with << ", judged with " << judged_with);
            requireSameLeakFigures(t.with(judging), judgedAgain(s, judging));
        }
    }
}

TEST_CASE("a saved report judged again: what it cannot tell, and what does not add up") {
    OneTrace t(poolTrace());
    analyzer::ReportOptions one;
    one.top = 1;
    one.caching_allocators = tableWith("mine: train_step\n");
    // Past --top: "mine" lists one of its three sites. With --count-cached all three are
    // leaked, the two unlisted in the totals only (their kinds and devices are not saved).
    const Report s = saved(t.with(one));
    REQUIRE(s.held_at_exit.size() == 1);
    CHECK(s.held_at_exit[0].sites == 3);
    analyzer::ReportOptions count_cached = one;
    count_cached.caching_allocators = nullptr;
    const Report trace = t.with(count_cached);
    const Report judged = judgedAgain(s, count_cached);
    CHECK(judged.summary.leaked_bytes == trace.summary.leaked_bytes);
    CHECK(judged.summary.leak_groups == trace.summary.leak_groups);
    CHECK(judged.summary.held_at_exit_bytes == 0);
    CHECK(judged.held_at_exit.empty());
    CHECK(analyzer::toJson(judged)["leak_scope"] == analyzer::toJson(trace)["leak_scope"]);
    CHECK(judged.processes[0].leaked_bytes == trace.processes[0].leaked_bytes);
    REQUIRE(judged.leaks.size() == 1);
    CHECK(judged.leaks[0].bytes == trace.leaks[0].bytes);
    CHECK(kindOf(judged, Kind::Device).leaked_bytes == 16 * MiB); // the trace: 21 MiB

    // Figures that do not add up with the listed sites are refused, not clamped.
    Report broken = saved(t.with({}));
    broken.leak_scope.bytes -= 1;
    CHECK_THROWS_AS(judgedAgain(broken, count_cached), analyzer::LeakPolicyError);
    broken = saved(t.with({}));
    broken.summary.held_at_exit_bytes = 0;
    CHECK_THROWS_AS(judgedAgain(broken, count_cached), analyzer::LeakPolicyError);

    // A phase's report cannot tell which held memory was allocated in the phase.
    Report phase = saved(t.with({}));
    phase.leak_scope.phase = "train";
    CHECK_THROWS_AS(judgedAgain(phase, count_cached), analyzer::LeakPolicyError);
    CHECK_NOTHROW(judgedAgain(phase, {})); // nothing moves
}
