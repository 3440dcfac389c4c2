// Writes the crafted traces the export tests read (export_e2e.py): every way an allocation
// can begin and end, on two GPUs, in two processes that share a pid (ranks on two hosts).
//
//   export_traces DIR   writes DIR/rank0.gmtrace and DIR/rank1.gmtrace
//
// rank0 (pid 4242, rank 0): device, pool, managed, pinned host, array and VMM memory; a
// free, a freed-twice pointer, an out-of-memory failure, a device reset that releases GPU 1's
// allocation (a teardown leak), an address allocated again after its free, phases, three
// threads. rank1 (pid 4242, rank 1): one freed and one leaked allocation on GPU 0.
#include <support/trace_builder.h>

#include <cstdio>
#include <string>

using gmt::test::Ev;
using gmt::test::TraceBuilder;
namespace tf = gmt::format;

namespace {

tf::Event onThread(tf::Event e, uint32_t tid) {
    e.tid = tid;
    return e;
}

void rank0(const std::string& path) {
    tf::HeaderInfo h = TraceBuilder::defaultHeader();
    h.rank = 0;
    h.world_size = 2;
    h.rank_source = "RANK";
    TraceBuilder b;
    b.header(h).device(TraceBuilder::defaultDevice(0)).device(TraceBuilder::defaultDevice(1));
    for (uint32_t id = 1; id <= 6; ++id) {
        b.stack(id, {0x400000 + id * 0x10, 0x500000 + id * 0x10});
    }
    tf::Event pool = Ev::alloc(3000, 0x500000, 4096, tf::Api::cudaMallocAsync, tf::Kind::Pool, 3);
    pool.stream = 7;
    tf::Event reset = Ev::op(6000, tf::Op::Teardown, tf::Api::cudaDeviceReset, 0, 0, 0, 6, 1);
    reset.kind = tf::Kind::None;
    b.event(Ev::alloc(1000, 0x1000, 1 << 20))
        .event(onThread(
            Ev::alloc(2000, 0x20000000, 2 << 20, tf::Api::cudaMalloc, tf::Kind::Device, 2, 1), 101))
        .phase(2500, "train")
        .event(pool)
        .event(
            Ev::alloc(3500, 0x90000000, 8192, tf::Api::cudaMallocHost, tf::Kind::HostPinned, 4, -1))
        .event(Ev::free(4000, 0x1000, tf::Api::cudaFree, tf::Kind::Device, 5))
        .event(onThread(Ev::failed(4500, 80ull << 30, 2, 1ull << 30, 80ull << 30), 102))
        .event(Ev::free(5000, 0x1000, tf::Api::cudaFree, tf::Kind::Device, 5))
        .event(Ev::alloc(5500, 0x30000000, 65536, tf::Api::cudaMallocManaged, tf::Kind::Managed, 1))
        .event(reset)
        .event(Ev::free(6500, 0x500000, tf::Api::cudaFreeAsync, tf::Kind::Pool, 5))
        .phase(6800, "eval")
        .event(Ev::alloc(7000, 0x1000, 512))
        .event(Ev::alloc(7500, 0xabc000, 1000, tf::Api::cudaMallocArray, tf::Kind::Array, 2))
        .event(Ev::op(8000, tf::Op::VmmCreate, tf::Api::cuMemCreate, 0, 2 << 20, 0x77, 3))
        .event(Ev::op(8100, tf::Op::VmmReserve, tf::Api::cuMemAddressReserve, 0x70000000, 4 << 20))
        .event(Ev::op(8200, tf::Op::VmmMap, tf::Api::cuMemMap, 0x70000000, 2 << 20, 0x77))
        .event(Ev::op(8300, tf::Op::VmmRelease, tf::Api::cuMemRelease, 0, 0, 0x77))
        .event(Ev::op(8400, tf::Op::VmmUnmap, tf::Api::cuMemUnmap, 0x70000000, 2 << 20))
        .event(Ev::alloc(8500, 0x40000000, 3 << 20, tf::Api::cudaMalloc, tf::Kind::Device, 2, 1))
        .event(Ev::alloc(8600, 0x41000000, 5 << 20, tf::Api::cudaMalloc, tf::Kind::Device, 3, 1))
        .event(Ev::free(8700, 0x41000000, tf::Api::cudaFree, tf::Kind::Device, 5, 1))
        .trailer(10000);
    b.write(path);
}

void rank1(const std::string& path) {
    tf::HeaderInfo h = TraceBuilder::defaultHeader();
    h.rank = 1;
    h.world_size = 2;
    h.rank_source = "RANK";
    h.host = "otherhost";
    TraceBuilder b;
    b.header(h).device(TraceBuilder::defaultDevice(0));
    b.stack(1, {0x400010}).stack(2, {0x400020});
    // Nested phases on thread 7 (an NVTX "step" with "forward" inside), then a pop with
    // nothing pushed, which ends nothing.
    b.push(1200, "step", 7)
        .push(1400, "forward", 7)
        .event(Ev::alloc(1500, 0x1000, 1 << 20))
        .pop(2000, 7)
        .event(Ev::free(2500, 0x1000))
        .event(Ev::alloc(2600, 0x2000, 3 << 20, tf::Api::cudaMalloc, tf::Kind::Device, 2))
        .pop(2700, 7)
        .pop(2800, 7)
        .trailer(9000);
    b.write(path);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: export_traces DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    rank0(dir + "/rank0.gmtrace");
    rank1(dir + "/rank1.gmtrace");
    return 0;
}
