// Writes the crafted traces the browser tests load (make_reports.py), for what no program
// on the simulated CUDA can make:
//
//   crafted_traces DIR   writes DIR/saturated.gmtrace
//
// saturated: two leaks of 2^64 - 1 and 2 bytes, whose sum the analysis stops at 2^64 - 1
// (docs/analysis.md, "Saturated figures"); the page must say so, never "1 B".
#include <support/trace_builder.h>

#include <cstdint>
#include <cstdio>
#include <string>

using gmt::test::Ev;
using gmt::test::TraceBuilder;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    TraceBuilder b;
    b.header(TraceBuilder::defaultHeader()).device(TraceBuilder::defaultDevice(0));
    b.stack(1, {0x401000, 0x402000});
    b.event(Ev::alloc(10, 0x7f0000000000, UINT64_MAX));
    b.event(Ev::alloc(11, 0x1000, 2));
    b.trailer(20);
    b.write(std::string(argv[1]) + "/saturated.gmtrace");
    return 0;
}
