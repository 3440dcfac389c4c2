// No input shape makes the analysis quadratic, and a run over many traces holds a bounded
// number of descriptors and bytes. Each case is bounded by work, not by wall-clock time:
// the CLI runs under a CPU-time limit (`ulimit -t`, counted only while it runs, so a busy
// machine does not change it) set far above what the near-linear analysis needs (tens of
// milliseconds here) and far below what the quadratic one took (tens of seconds).
// Speed itself is measured by scripts/bench-analyzer.sh, not here.
#include "report_fixture.h"
#include "support/run_command.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;
using format::Op;

namespace {

constexpr uint64_t B = 0x7f0000000000;

// `args` run under a CPU-time limit of `seconds`; SIGXCPU ends it when exceeded.
CommandResult runLimited(int seconds, const std::string& args) {
    return runCommand("ulimit -t " + std::to_string(seconds) + " && exec " + GMT_CLI + " " + args);
}

// Frames of a few thousand records, as the recorder writes them.
void maybeEndFrame(TraceBuilder& b, size_t i) {
    if (i % 4096 == 4095) {
        b.endFrame();
    }
}

} // namespace

TEST_CASE("40 k live allocations and 40 k context create/destroy pairs: near-linear") {
    TempDir dir;
    auto b = standardTrace();
    constexpr size_t n = 40'000;
    uint64_t t = 10;
    for (size_t i = 0; i < n; ++i) {
        auto e = Ev::alloc(t++, B + i * 4096, 4096);
        e.context = 0xc0;
        b.event(e);
        maybeEndFrame(b, i);
    }
    for (size_t i = 0; i < n; ++i) {
        auto create = Ev::make(t++, Op::CtxCreate, Api::cuCtxCreate_v2, Kind::None, 0, 0, 1, 0);
        create.context = 0x100000 + i;
        b.event(create);
        auto destroy = Ev::make(t++, Op::Teardown, Api::cuCtxDestroy_v2, Kind::None, 0, 0, 1, 0);
        destroy.context = create.context;
        b.event(destroy);
        maybeEndFrame(b, i);
    }
    b.trailer(t);
    std::string trace = b.write(dir.file("t.gmtrace"));
    auto r = runLimited(3, "check --no-symbols " + trace);
    INFO(r.err);
    CHECK(r.status == 1); // the 40 k allocations leak; the destroyed contexts owned nothing
    CHECK_THAT(r.out, Catch::Contains("in 40000 allocations"));
}

TEST_CASE("100 k module records: near-linear") {
    TempDir dir;
    auto b = standardTrace();
    constexpr size_t n = 100'000;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t base = 0x10000000 + i * 0x10000;
        b.module({base, base, base + 0x1000, "/lib/plugin" + std::to_string(i) + ".so", ""});
        maybeEndFrame(b, i);
    }
    b.event(Ev::alloc(10, B, 4096));
    b.trailer(20);
    std::string trace = b.write(dir.file("t.gmtrace"));
    for (const char* command : {"check --no-symbols ", "check ", "report "}) {
        auto r = runLimited(4, command + trace);
        INFO(command << r.err);
        CHECK(r.status == (std::string(command) == "report " ? 0 : 1));
    }
}

TEST_CASE("30 k devices each holding memory: near-linear") {
    TempDir dir;
    auto b = standardTrace();
    constexpr size_t n = 30'000;
    for (size_t i = 1; i < n; ++i) {
        b.device(TraceBuilder::defaultDevice(static_cast<int>(i)));
        maybeEndFrame(b, i);
    }
    for (size_t i = 0; i < n; ++i) {
        b.event(Ev::alloc(10 + i * 1000, B + i * (4u << 20), 4096, Api::cudaMalloc, Kind::Device, 1,
                          static_cast<int16_t>(i)));
        maybeEndFrame(b, i);
    }
    b.trailer(10 + n * 1000);
    std::string trace = b.write(dir.file("t.gmtrace"));
    auto r = runLimited(8, "check --no-symbols " + trace);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("in 30000 allocations"));
}

TEST_CASE("a report over 1 100 traces holds a bounded number of descriptors and buffers") {
    TempDir dir;
    constexpr size_t n = 1100;
    std::string traces;
    for (size_t i = 0; i < n; ++i) {
        auto h = TraceBuilder::defaultHeader();
        h.pid = static_cast<uint32_t>(1000 + i);
        TraceBuilder b;
        b.header(h).device().stack(1, {0x401000});
        // Two frames, interleaved in time with every other trace: all are open at once.
        b.event(Ev::alloc(10 + i, B + i * 4096, 4096)).endFrame();
        b.event(Ev::free(100'000 + i, B + i * 4096));
        b.trailer(200'000);
        traces += " " + b.write(dir.file("t" + std::to_string(i) + ".gmtrace"));
    }
    // 256 descriptors and 800 MB of address space: a descriptor and 1 MiB of read-ahead
    // per trace need more than both.
    auto r = runCommand("ulimit -n 256 && ulimit -v 800000 && exec " + std::string(GMT_CLI) +
                        " report --format json --no-symbols" + traces);
    INFO(r.err);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["processes"].size() == n);
    CHECK(j["summary"]["allocations"] == n);
    CHECK(j["summary"]["leaked_bytes"] == 0);
}

TEST_CASE("40 k VMM reservations and a peak that moves at every allocation: near-linear") {
    // A fragmentation measurement at each new peak walked every reservation, and only the
    // allocations were counted in what the measurement may cost.
    TempDir dir;
    auto b = standardTrace();
    constexpr size_t n = 40'000;
    uint64_t t = 10;
    for (size_t i = 0; i < n; ++i) {
        b.event(Ev::op(t++, Op::VmmReserve, Api::cuMemAddressReserve,
                       0x100000000000ull + i * (2u << 20), 2u << 20));
        maybeEndFrame(b, i);
    }
    for (size_t i = 0; i < n; ++i) {
        b.event(Ev::alloc(t++, B, 4096 + i)); // each one larger: a new peak
        b.event(Ev::free(t++, B));
        maybeEndFrame(b, i);
    }
    b.trailer(t);
    std::string trace = b.write(dir.file("t.gmtrace"));
    auto r = runLimited(3, "check --no-symbols " + trace);
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("ok   leaks: no leaks"));
}
