// Many threads allocating and freeing at once: no two live blocks may ever overlap, and all
// the memory comes back.
#include "driver_test_support.h"

#include <algorithm>
#include <barrier>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace cudasim_test;

namespace {

enum class Kind { Device, Managed, Pool, Pinned };

struct Live {
    uint64_t addr;
    uint64_t size;
    Kind kind;
};

bool release(const Live& block) {
    switch (block.kind) {
    case Kind::Device:
    case Kind::Managed:
        return cuMemFree(block.addr) == CUDA_SUCCESS;
    case Kind::Pool:
        return cuMemFreeAsync(block.addr, nullptr) == CUDA_SUCCESS;
    case Kind::Pinned:
        return cuMemFreeHost(reinterpret_cast<void*>(block.addr)) == CUDA_SUCCESS;
    }
    return false;
}

} // namespace

TEST_CASE("eight threads allocating and freeing concurrently", "[threads]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    constexpr int kThreads = 8;
    constexpr int kIterations = 1500;

    std::mutex mutex;
    std::vector<Live> snapshot; // everything live at the barrier, from all threads
    std::barrier barrier(kThreads);
    int failures = 0;

    auto worker = [&](int seed) {
        cuCtxSetCurrent(primary.ctx);
        std::mt19937 random(seed);
        std::vector<Live> live;
        int local_failures = 0;
        auto step = [&]() {
            if (!live.empty() && (live.size() > 40 || random() % 3 == 0)) {
                size_t victim = random() % live.size();
                local_failures += release(live[victim]) ? 0 : 1;
                live.erase(live.begin() + static_cast<long>(victim));
                return;
            }
            uint64_t size = random() % 4 == 0 ? (1 + random() % 5) * kMiB : 1 + random() % 20000;
            Kind kind = static_cast<Kind>(random() % 4);
            CUdeviceptr addr = 0;
            CUresult result = CUDA_SUCCESS;
            switch (kind) {
            case Kind::Device:
                result = cuMemAlloc(&addr, size);
                break;
            case Kind::Managed:
                result = cuMemAllocManaged(&addr, size, CU_MEM_ATTACH_GLOBAL);
                break;
            case Kind::Pool:
                result = cuMemAllocAsync(&addr, size, nullptr);
                break;
            case Kind::Pinned: {
                void* host = nullptr;
                result = cuMemAllocHost(&host, size);
                addr = reinterpret_cast<CUdeviceptr>(host);
                break;
            }
            }
            if (result == CUDA_SUCCESS) {
                live.push_back({addr, size, kind});
            } else {
                ++local_failures;
            }
        };
        for (int i = 0; i < kIterations; ++i) {
            step();
        }
        {
            std::lock_guard<std::mutex> lock(mutex);
            snapshot.insert(snapshot.end(), live.begin(), live.end());
        }
        barrier.arrive_and_wait();
        for (int i = 0; i < kIterations; ++i) {
            step();
        }
        for (const Live& block : live) {
            local_failures += release(block) ? 0 : 1;
        }
        std::lock_guard<std::mutex> lock(mutex);
        failures += local_failures;
    };

    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back(worker, t + 1);
    }
    for (auto& thread : threads) {
        thread.join();
    }

    CHECK(failures == 0);
    REQUIRE_FALSE(snapshot.empty());
    std::sort(snapshot.begin(), snapshot.end(),
              [](const Live& a, const Live& b) { return a.addr < b.addr; });
    for (size_t i = 1; i < snapshot.size(); ++i) {
        INFO("block " << i << " at 0x" << std::hex << snapshot[i].addr);
        CHECK(snapshot[i - 1].addr + snapshot[i - 1].size <= snapshot[i].addr);
    }
    REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS); // lets the default pool give its memory back
    CHECK(used_bytes() == used_before);
}
