// Writes the crafted traces the browser tests load (make_reports.py), for what no program
// on the simulated CUDA can make:
//
//   crafted_traces DIR   writes DIR/saturated.gmtrace and DIR/killed.gmtrace
//
// saturated: two leaks of 2^64 - 1 and 2 bytes, whose sum the analysis stops at 2^64 - 1
// (docs/analysis.md, "Saturated figures"); the page must say so, never "1 B".
// killed: a run killed right after an allocation failed, as a job that died leaves it: a
// phase marked and one pushed before its first allocation, the failure its last event, no
// trailer. Neither end of the run is a change of live bytes, and the timeline must still
// show every mark.
#include <support/trace_builder.h>

#include <cstdint>
#include <cstdio>
#include <string>

using gmt::test::Ev;
using gmt::test::TraceBuilder;

namespace {

void saturated(const std::string& dir) {
    TraceBuilder b;
    b.header(TraceBuilder::defaultHeader()).device(TraceBuilder::defaultDevice(0));
    b.stack(1, {0x401000, 0x402000});
    b.event(Ev::alloc(10, 0x7f0000000000, UINT64_MAX));
    b.event(Ev::alloc(11, 0x1000, 2));
    b.trailer(20);
    b.write(dir + "/saturated.gmtrace");
}

void killed(const std::string& dir) {
    constexpr uint64_t ms = 1'000'000;
    constexpr uint64_t MiB = 1 << 20;
    TraceBuilder b;
    b.header(TraceBuilder::defaultHeader()).device(TraceBuilder::defaultDevice(0));
    b.stack(1, {0x401000, 0x402000}).stack(3, {0x403000, 0x402000});
    b.phase(1 * ms, "setup").push(2 * ms, "train", 100);
    for (uint64_t i = 0; i < 8; ++i) {
        b.event(Ev::alloc((10 + i) * ms, 0x7f0000000000 + i * 64 * MiB, 64 * MiB));
    }
    b.event(
        Ev::failed(40 * ms, 8192 * MiB, 2 /* cudaErrorMemoryAllocation */, 512 * MiB, 80ull << 30));
    b.write(dir + "/killed.gmtrace");
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    saturated(argv[1]);
    killed(argv[1]);
    return 0;
}
