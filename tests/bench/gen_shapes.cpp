// Writes the input shapes that once made the analyzer quadratic, at any size, for
// scripts/bench-shapes.sh (the same shapes, at one size, are the tests in
// tests/analyzer/scaling_test.cpp):
//
//   gen_shapes OUT contexts N   N live allocations, then N context create/destroy pairs
//   gen_shapes OUT modules N    N module records
//   gen_shapes OUT devices N    N devices (N <= 32767), each holding one allocation
//   gen_shapes OUT reservations N   N VMM reservations, then N allocations each a new peak,
//                                   each freed
#include "support/trace_builder.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tf = gmt::format;
using gmt::test::Ev;
using gmt::test::TraceBuilder;

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s OUT contexts|modules|devices N\n", argv[0]);
        return 2;
    }
    const std::string shape = argv[2];
    const uint64_t n = std::strtoull(argv[3], nullptr, 10);
    constexpr uint64_t kBase = 0x7f0000000000ull;
    TraceBuilder b;
    b.header().device().stack(1, {0x401000, 0x402000});
    uint64_t t = 10;
    auto frame = [&](uint64_t i) {
        if (i % 4096 == 4095) {
            b.endFrame(); // frames of a few thousand records, as the recorder writes them
        }
    };
    if (shape == "contexts") {
        for (uint64_t i = 0; i < n; ++i) {
            auto e = Ev::alloc(t++, kBase + i * 4096, 4096);
            e.context = 0xc0;
            b.event(e);
            frame(i);
        }
        for (uint64_t i = 0; i < n; ++i) {
            auto create = Ev::make(t++, tf::Op::CtxCreate, tf::Api::cuCtxCreate_v2, tf::Kind::None,
                                   0, 0, 1, 0);
            create.context = 0x100000 + i;
            b.event(create);
            auto destroy = Ev::make(t++, tf::Op::Teardown, tf::Api::cuCtxDestroy_v2, tf::Kind::None,
                                    0, 0, 1, 0);
            destroy.context = create.context;
            b.event(destroy);
            frame(i);
        }
    } else if (shape == "modules") {
        for (uint64_t i = 0; i < n; ++i) {
            const uint64_t base = 0x10000000 + i * 0x10000;
            b.module({base, base, base + 0x1000, "/lib/plugin" + std::to_string(i) + ".so", ""});
            frame(i);
        }
        b.event(Ev::alloc(t++, kBase, 4096));
    } else if (shape == "reservations") {
        for (uint64_t i = 0; i < n; ++i) {
            b.event(Ev::op(t++, tf::Op::VmmReserve, tf::Api::cuMemAddressReserve,
                           0x100000000000ull + i * (2u << 20), 2u << 20));
            frame(i);
        }
        for (uint64_t i = 0; i < n; ++i) {
            b.event(Ev::alloc(t++, kBase, 4096 + i)); // each one larger: a new peak
            b.event(Ev::free(t++, kBase));
            frame(i);
        }
    } else if (shape == "devices" && n <= 32767) {
        for (uint64_t i = 1; i < n; ++i) {
            b.device(TraceBuilder::defaultDevice(static_cast<int>(i)));
            frame(i);
        }
        for (uint64_t i = 0; i < n; ++i) {
            b.event(Ev::alloc(t, kBase + i * (4u << 20), 4096, tf::Api::cudaMalloc,
                              tf::Kind::Device, 1, static_cast<int16_t>(i)));
            t += 1000;
            frame(i);
        }
    } else {
        std::fprintf(stderr, "gen_shapes: unknown shape %s (or too many devices)\n", argv[2]);
        return 2;
    }
    b.trailer(t);
    b.write(argv[1]);
    return 0;
}
