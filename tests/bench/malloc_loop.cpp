// The heaptrack side of the analyzer benchmark: makes exactly the event pattern gen_trace
// writes (fill a live set, then alternate free / malloc on the oldest slot, four
// allocation sites, four sizes) with malloc/free, to be run under `heaptrack -o FILE`.
//
//   malloc_loop EVENTS [LIVE_SET=64]
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr size_t kSizes[] = {1024, 3072, 256, 8192};

// Four distinct allocation sites, as gen_trace has four allocation stacks. The asm keeps
// malloc from being a tail call, which would drop the site's frame from the stack.
template <int Site> __attribute__((noinline)) void* site(size_t n) {
    void* p = std::malloc(n);
    asm volatile("" : : "r"(p) : "memory");
    return p;
}

void* allocate(uint64_t n) {
    const size_t bytes = kSizes[n % 4];
    switch (n % 4) {
    case 0:
        return site<0>(bytes);
    case 1:
        return site<1>(bytes);
    case 2:
        return site<2>(bytes);
    default:
        return site<3>(bytes);
    }
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s EVENTS [LIVE_SET=64]\n", argv[0]);
        return 2;
    }
    const uint64_t events = std::strtoull(argv[1], nullptr, 10);
    const uint64_t live = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 64;
    if (live == 0) {
        return 2;
    }
    std::vector<void*> slots(live, nullptr); // allocated before counting starts
    uint64_t written = 0, n = 0;
    for (uint64_t s = 0; s < live && written < events; ++s, ++n, ++written) {
        slots[s] = allocate(n);
    }
    for (uint64_t s = 0; written < events; s = (s + 1) % live, ++n) {
        std::free(slots[s]);
        slots[s] = nullptr;
        if (++written < events) {
            slots[s] = allocate(n);
            ++written;
        }
    }
    // Like the trace, the live set stays allocated to the end (reported as leaked).
    std::printf("%" PRIu64 "\n", written);
    return 0;
}
