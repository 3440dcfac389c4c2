// Block events of PyTorch's CUDA caching allocator (docs/frameworks.md): the recorder
// attaches a trace tracker to it — CUDAAllocator::attachAllocatorTraceTracker, the C++ API
// PyTorch's memory history is built on — without its headers, through the exported
// `c10::cuda::CUDACachingAllocator::allocator` and the vtable slots torch_abi.h gives for
// the PyTorch version found. Every block the allocator hands out or takes back, and every
// segment it takes from or gives back to CUDA, becomes an Op::Block event with the stack of
// the thread that caused it.
//
// When: libc10_cuda.so shows up among the loaded modules (the module map sees it when a
// stack from it is first recorded); from then on every allocation hook polls until the
// allocator is initialized (its per-device allocators exist only after CUDA's lazy init),
// then attaches, once. Only one thread tries at a time and none waits for it. Once attached,
// or once given up (an unknown version, another backend), polling costs one predictable
// branch, as it does in a process without PyTorch.
#pragma once

#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/records.h>

#include <atomic>
#include <cstdint>

namespace gmt::preload::frameworks {

struct TorchAbi;

class TorchCachingAllocator {
  public:
    using RecordFn = void (*)(format::Event& event);
    using ReportFn = void (*)(const format::CachingAllocatorInfo& info);

    // `record` takes each block event (it stamps time, thread and stack); `report` the
    // one record saying what became of the attempt.
    void start(bool enabled, RecordFn record, ReportFn report);

    // A module the module map has not seen before.
    void noticeModule(const format::ModuleInfo& module);

    // From every allocation hook.
    void poll() {
        if (state_.load(std::memory_order_relaxed) == kFound) [[unlikely]] {
            attempt();
        }
    }

  private:
    enum State : uint8_t {
        kWatching, // no libc10_cuda.so yet
        kFound,    // loaded: attach once its allocator is initialized
        kDone,     // attached, or given up
    };
    void attempt();
    // Gives up for good, saying why.
    void giveUp(format::CachingAllocatorStatus status, const char* detail);
    bool resolve();

    std::atomic<State> state_{kWatching};
    std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
    bool enabled_ = true;
    RecordFn record_ = nullptr;
    ReportFn report_ = nullptr;
    // Set by noticeModule before state_ becomes kFound (release), read after.
    char path_[4096] = {};
    uint64_t module_start_ = 0;
    uint64_t module_end_ = 0;
    // Set by resolve(), under busy_.
    bool resolved_ = false;
    const TorchAbi* abi_ = nullptr;
    void* allocator_symbol_ = nullptr; // std::atomic<CUDAAllocator*>
    char version_[64] = {};
};

} // namespace gmt::preload::frameworks
