// Growth across iterations (analyzer/analysis/growth_analysis.h): the training-like loop that keeps
// one 1 MiB buffer per step is found, with the right rate, first iteration and stack, from
// phase marks, from nested phases (NVTX ranges) and from the allocation pattern alone; a
// constant working set and a warm-up are not.
#include "report/report_json.h"
#include "report_fixture.h"
#include "support/json_schema.h"

#include <fstream>

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;
using format::PhaseKind;

namespace {

constexpr uint64_t B = 0x7f0000000000;
constexpr uint32_t kTemporary = 1; // stack of the per-step working buffer
constexpr uint32_t kKept = 2;      // stack of the buffer the loop keeps
constexpr uint32_t kOther = 3;

enum class Marks { None, Phase, Nvtx };

// 50 steps; each allocates a 4 MiB working buffer and frees it, and (when `keeps`) keeps
// a 1 MiB buffer, as a training loop appending to a list would.
TraceBuilder loop(Marks marks, bool keeps, int steps = 50) {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 64 * MiB, Api::cudaMalloc, Kind::Device, kOther)); // the model
    uint64_t t = 100;
    for (int i = 0; i < steps; ++i, t += 100) {
        if (marks == Marks::Phase) {
            b.phase(t, "step");
        } else if (marks == Marks::Nvtx) {
            b.push(t, "step");
            b.push(t + 1, "forward");
        }
        const uint64_t work = B + 0x100000000 + static_cast<uint64_t>(i) * 0x1000000;
        b.event(Ev::alloc(t + 2, work, 4 * MiB, Api::cudaMalloc, Kind::Device, kTemporary));
        if (keeps) {
            const uint64_t kept = B + 0x800000000 + static_cast<uint64_t>(i) * 0x200000;
            b.event(Ev::alloc(t + 3, kept, 1 * MiB, Api::cudaMalloc, Kind::Device, kKept));
        }
        if (marks == Marks::Nvtx) {
            b.pop(t + 4);
            b.push(t + 5, "backward");
        }
        b.event(Ev::free(t + 6, work));
        if (marks == Marks::Nvtx) {
            b.pop(t + 7);
            b.pop(t + 8);
        }
    }
    b.trailer(t);
    return b;
}

const analyzer::IterationReport& iterations(const analyzer::Report& r) {
    REQUIRE(r.iterations.size() == 1);
    return r.iterations.front();
}

void requireOneMiBPerStep(const analyzer::Report& r) {
    REQUIRE(r.growth.size() == 1);
    const auto& g = r.growth.front();
    CHECK(g.stack_id == kKept);
    CHECK(g.bytes_per_iteration == 1 * MiB);
    CHECK(g.first_iteration == 1);
    CHECK(g.iterations == 49);
    CHECK(g.growing_iterations == 49);
    CHECK(g.confidence == Approx(50.0 / 51.0));
    CHECK(g.live_bytes == 49 * MiB);
    CHECK(r.growth_scope.sites == 1);
    CHECK(r.growth_scope.bytes_per_iteration == 1 * MiB);
    CHECK(iterations(r).growing_sites == 1);
    CHECK(iterations(r).growth_bytes_per_iteration == 1 * MiB);
}

} // namespace

TEST_CASE("growth: one 1 MiB buffer kept per step - with phase marks") {
    auto b = loop(Marks::Phase, true);
    auto r = report(b);
    CHECK(iterations(r).source == "phase");
    CHECK(iterations(r).phase == "step");
    CHECK(iterations(r).boundaries == 50);
    requireOneMiBPerStep(r);
    CHECK(r.growth.front().phase == std::vector<std::string>{"step"});
}

TEST_CASE("growth: one 1 MiB buffer kept per step - with NVTX ranges, the outer one") {
    auto b = loop(Marks::Nvtx, true);
    auto r = report(b);
    // forward and backward repeat as often as step, but are nested in it.
    CHECK(iterations(r).source == "phase");
    CHECK(iterations(r).phase == "step");
    requireOneMiBPerStep(r);
    CHECK(r.growth.front().phase == std::vector<std::string>{"step", "forward"});
}

TEST_CASE("growth: one 1 MiB buffer kept per step - from the allocation pattern alone") {
    auto b = loop(Marks::None, true);
    auto r = report(b);
    CHECK(iterations(r).source == "pattern");
    // Both per-step stacks are allocated 50 times; the first of them begins each step.
    CHECK(iterations(r).stack_id == kTemporary);
    CHECK(iterations(r).boundaries == 50);
    requireOneMiBPerStep(r);
    CHECK(r.growth.front().phase.empty());
}

TEST_CASE("growth: a stack whose allocations are all kept is no iteration clock") {
    // Each step keeps its 1 MiB buffer before it allocates its working buffer: both stacks
    // are allocated 50 times and the kept one first, but it never frees, so the working
    // buffer's stack begins the steps.
    auto b = standardTrace();
    uint64_t t = 100;
    for (int i = 0; i < 50; ++i, t += 100) {
        const uint64_t kept = B + 0x800000000 + static_cast<uint64_t>(i) * 0x200000;
        const uint64_t work = B + 0x100000000 + static_cast<uint64_t>(i) * 0x1000000;
        b.event(Ev::alloc(t + 1, kept, 1 * MiB, Api::cudaMalloc, Kind::Device, kKept));
        b.event(Ev::alloc(t + 2, work, 4 * MiB, Api::cudaMalloc, Kind::Device, kTemporary));
        b.event(Ev::free(t + 3, work));
    }
    b.trailer(t);
    auto r = report(b);
    CHECK(iterations(r).source == "pattern");
    CHECK(iterations(r).stack_id == kTemporary);
    REQUIRE(r.growth.size() == 1);
    CHECK(r.growth.front().stack_id == kKept);
    CHECK(r.growth.front().bytes_per_iteration == 1 * MiB);

    // A list filled in a loop and freed after it (a test that allocates four buffers and
    // releases them): no stack repeats with its memory freed in between, so there are no
    // iterations and nothing grows.
    auto list = standardTrace();
    for (uint64_t i = 0; i < 4; ++i) {
        list.event(Ev::alloc(100 + i, B + i * 0x10000000, 256 * MiB, Api::cudaMalloc, Kind::Device,
                             kKept));
    }
    for (uint64_t i = 0; i < 4; ++i) {
        list.event(Ev::free(200 + i, B + i * 0x10000000));
    }
    list.trailer(300);
    auto none = report(list);
    CHECK(iterations(none).source == "none");
    CHECK(iterations(none).note.find("freed in between") != std::string::npos);
    CHECK(none.growth.empty());
}

TEST_CASE("growth: a constant working set does not grow") {
    for (Marks marks : {Marks::None, Marks::Phase, Marks::Nvtx}) {
        auto b = loop(marks, false);
        auto r = report(b);
        CHECK(iterations(r).source != "none");
        CHECK(iterations(r).growing_sites == 0);
        CHECK(r.growth.empty());
        CHECK(r.growth_scope.sites == 0);
    }
}

TEST_CASE("growth: a warm-up that stops growing is not growth") {
    // A cache that takes 1 MiB more in each of the first 3 steps, then nothing.
    auto b = standardTrace();
    for (int i = 0; i < 50; ++i) {
        const uint64_t t = 100 + static_cast<uint64_t>(i) * 100;
        b.phase(t, "step");
        if (i < 3) {
            b.event(Ev::alloc(t + 1, B + static_cast<uint64_t>(i) * 0x200000, 1 * MiB,
                              Api::cudaMalloc, Kind::Device, kKept));
        }
        b.event(
            Ev::alloc(t + 2, B + 0x100000000, 4 * MiB, Api::cudaMalloc, Kind::Device, kTemporary));
        b.event(Ev::free(t + 3, B + 0x100000000));
    }
    b.trailer(6000);
    auto r = report(b);
    CHECK(iterations(r).boundaries == 50);
    CHECK(r.growth.empty());
}

TEST_CASE("growth: a leak that starts late is found from where it starts") {
    auto b = standardTrace();
    for (int i = 0; i < 40; ++i) {
        const uint64_t t = 100 + static_cast<uint64_t>(i) * 100;
        b.phase(t, "step");
        if (i >= 20) { // from the 21st step, i.e. in iterations 20.. (step 21 ends at boundary 20)
            b.event(Ev::alloc(t + 1, B + static_cast<uint64_t>(i) * 0x400000, 2 * MiB,
                              Api::cudaMalloc, Kind::Device, kKept));
        }
    }
    b.trailer(5000);
    auto r = report(b);
    REQUIRE(r.growth.size() == 1);
    CHECK(r.growth[0].first_iteration == 21);
    CHECK(r.growth[0].iterations == 19);
    CHECK(r.growth[0].bytes_per_iteration == 2 * MiB);
}

TEST_CASE("growth: the iteration phase can be named - one never marked says so") {
    auto b = loop(Marks::Nvtx, true);
    analyzer::ReportOptions o;
    o.iteration = "forward";
    auto r = report(b, o);
    CHECK(iterations(r).phase == "forward");
    requireOneMiBPerStep(r);

    o.iteration = "epoch";
    auto none = report(b, o);
    CHECK(iterations(none).source == "none");
    CHECK(iterations(none).note == "phase epoch was never marked");
    CHECK(none.growth.empty());
}

TEST_CASE("growth: --phase lists the growth that began in that phase") {
    // Two tests pushed as phases; only test_b's loop keeps memory.
    auto b = standardTrace();
    uint64_t t = 10;
    for (const char* test : {"test_a", "test_b"}) {
        b.push(t, test);
        for (int i = 0; i < 10; ++i, t += 10) {
            b.phase(t + 1, "step", PhaseKind::Mark, 100);
            if (std::string(test) == "test_b") {
                b.event(Ev::alloc(t + 2, B + t * 0x100000, 1 * MiB, Api::cudaMalloc, Kind::Device,
                                  kKept));
            }
        }
        b.pop(t++);
    }
    b.trailer(t + 10);
    analyzer::ReportOptions o;
    auto all = report(b, o);
    REQUIRE(all.growth.size() == 1);
    CHECK(all.growth[0].phase == std::vector<std::string>{"test_b", "step"});
    o.phase = "test_b";
    auto in_b = report(b, o);
    CHECK(in_b.growth_scope.phase == "test_b");
    CHECK(in_b.growth.size() == 1);
    o.phase = "test_a";
    auto in_a = report(b, o);
    CHECK(in_a.growth.empty());
    CHECK(in_a.growth_scope.sites == 0);
    CHECK(iterations(in_a).growing_sites == 1); // the process's figures stay whole
}

TEST_CASE("growth: JSON round trip") {
    auto b = loop(Marks::Phase, true);
    auto r = report(b);
    auto back = analyzer::fromJson(analyzer::toJson(r));
    REQUIRE(back.growth.size() == 1);
    CHECK(back.growth[0].bytes_per_iteration == 1 * MiB);
    CHECK(back.growth[0].confidence == Approx(r.growth[0].confidence));
    CHECK(back.growth[0].phase == r.growth[0].phase);
    CHECK(back.iterations.size() == 1);
    CHECK(back.iterations[0].phase == "step");
    CHECK(back.growth_scope.sites == 1);
    CHECK(back.phases[0].path == r.phases[0].path);
}

TEST_CASE("growth: the JSON follows the schema - and the reader needs what it requires") {
    auto b = loop(Marks::None, true);
    const auto json = analyzer::toJson(report(b));
    std::ifstream f(GMT_REPORT_SCHEMA);
    SchemaValidator schema(nlohmann::json::parse(f));
    const auto errors = schema.validate(json);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());
    size_t tried = 0;
    for (const auto& field : schema.requiredFields(json)) {
        if (field.path.rfind("growth", 0) != 0 && field.path.rfind("iterations", 0) != 0) {
            continue;
        }
        auto mutated = json;
        mutated[field.pointer.parent_pointer()].erase(field.pointer.back());
        INFO("without " << field.path);
        CHECK_THROWS_WITH(analyzer::fromJson(mutated), Catch::Contains(field.path));
        ++tried;
    }
    CHECK(tried >= 20); // growth[0].*, growth_scope.*, iterations[0].*
}
