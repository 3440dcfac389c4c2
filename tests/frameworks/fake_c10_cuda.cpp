// A stand-in for PyTorch's libc10_cuda.so, for the tests of the recorder's caching allocator
// support on the simulated CUDA (docs/frameworks.md): it exports the symbol PyTorch exports,
// `c10::cuda::CUDACachingAllocator::allocator`, pointing at an object whose vtable has
// initialized(), attachAllocatorTraceTracker() and name() at the slots of torch 2.11, and
// calls its trackers with entries laid out as torch 2.11's TraceEntry. Its allocator follows
// PyTorch's rules (sizes rounded to 512 bytes; blocks up to 1 MiB from 2 MiB segments,
// larger ones from 20 MiB segments or their own size rounded to 2 MiB; best fit on the same
// stream; a block split when what is left is at least 512 bytes (small) or more than 1 MiB
// (large, below max_split_size); freed blocks merged with free neighbours; a free of a block
// used on another stream completing later; on a failed cudaMalloc the free unsplit segments
// given back and the allocation tried again; then an OOM entry) and keeps PyTorch's
// statistics, which the tests compare with what the analysis rebuilt from the trace.
//
// Test code only: nothing of PyTorch's is copied here, only its documented behaviour.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace c10 {

namespace CachingDeviceAllocator {
// torch 2.11's TraceEntry, field for field (136 bytes).
struct TraceEntry {
    enum Action {
        ALLOC,
        FREE_REQUESTED,
        FREE_COMPLETED,
        SEGMENT_ALLOC,
        SEGMENT_FREE,
        SEGMENT_MAP,
        SEGMENT_UNMAP,
        SNAPSHOT,
        OOM
    };
    Action action_;
    int8_t device_;
    size_t addr_;
    std::shared_ptr<void> context_;
    void* stream_{};
    size_t size_;
    std::pair<uint64_t, uint64_t> mempool_;
    uint64_t time_{};
    std::string compile_context_;
    std::string user_metadata_;
};
static_assert(sizeof(TraceEntry) == 136);
static_assert(offsetof(TraceEntry, device_) == 4);
static_assert(offsetof(TraceEntry, addr_) == 8);
static_assert(offsetof(TraceEntry, stream_) == 32);
static_assert(offsetof(TraceEntry, size_) == 40);
static_assert(offsetof(TraceEntry, mempool_) == 48);
using AllocatorTraceTracker = std::function<void(const TraceEntry&)>;
} // namespace CachingDeviceAllocator

// The vtable of torch 2.11's CUDAAllocator: c10::Allocator's destructors (slots 0-1) and
// four methods (2-5), c10::DeviceAllocator's initialized() (6) and six more (7-12), then
// CUDAAllocator's own: attachAllocatorTraceTracker at 44, name at 49. The others are
// placeholders here.
// A placeholder method; the `;` after each use makes it a declaration clang-format keeps.
#define FAKE_SLOT(n)                                                                               \
    virtual void slot##n() {                                                                       \
        std::abort();                                                                              \
    }                                                                                              \
    static_assert(true)
struct Allocator {
    virtual ~Allocator() = default;
    FAKE_SLOT(2);
    FAKE_SLOT(3);
    FAKE_SLOT(4);
    FAKE_SLOT(5);
};
struct DeviceAllocator : Allocator {
    virtual bool initialized() = 0;
    FAKE_SLOT(7);
    FAKE_SLOT(8);
    FAKE_SLOT(9);
    FAKE_SLOT(10);
    FAKE_SLOT(11);
    FAKE_SLOT(12);
};

namespace cuda::CUDACachingAllocator {

using CachingDeviceAllocator::AllocatorTraceTracker;
using CachingDeviceAllocator::TraceEntry;

struct CUDAAllocator : DeviceAllocator {
    FAKE_SLOT(13);
    FAKE_SLOT(14);
    FAKE_SLOT(15);
    FAKE_SLOT(16);
    FAKE_SLOT(17);
    FAKE_SLOT(18);
    FAKE_SLOT(19);
    FAKE_SLOT(20);
    FAKE_SLOT(21);
    FAKE_SLOT(22);
    FAKE_SLOT(23);
    FAKE_SLOT(24);
    FAKE_SLOT(25);
    FAKE_SLOT(26);
    FAKE_SLOT(27);
    FAKE_SLOT(28);
    FAKE_SLOT(29);
    FAKE_SLOT(30);
    FAKE_SLOT(31);
    FAKE_SLOT(32);
    FAKE_SLOT(33);
    FAKE_SLOT(34);
    FAKE_SLOT(35);
    FAKE_SLOT(36);
    FAKE_SLOT(37);
    FAKE_SLOT(38);
    FAKE_SLOT(39);
    FAKE_SLOT(40);
    FAKE_SLOT(41);
    FAKE_SLOT(42);
    FAKE_SLOT(43);
    virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
    FAKE_SLOT(45);
    FAKE_SLOT(46);
    FAKE_SLOT(47);
    FAKE_SLOT(48);
    virtual std::string name() = 0;
};

// What PyTorch exports; null until the allocator is set up (a static initialiser there).
__attribute__((visibility("default"))) std::atomic<CUDAAllocator*> allocator{nullptr};

namespace Native {

constexpr size_t kMinBlockSize = 512;
constexpr size_t kSmallSize = 1 << 20;
constexpr size_t kSmallBuffer = 2 << 20;
constexpr size_t kLargeBuffer = 20 << 20;
constexpr size_t kMinLargeAlloc = 10 << 20;
constexpr size_t kRoundLarge = 2 << 20;

struct Block {
    uint64_t ptr = 0;
    size_t size = 0;
    size_t requested = 0;
    void* stream = nullptr;
    bool small = false;
    bool allocated = false;
    bool pending = false; // freed, waiting for the streams it was used on
    std::vector<void*> stream_uses;
    Block* prev = nullptr;
    Block* next = nullptr;
};

struct Stats {
    uint64_t allocated = 0, reserved = 0, active = 0, requested = 0;
    uint64_t max_allocated = 0, max_reserved = 0;
    uint64_t inactive_split = 0, inactive_split_bytes = 0;
    uint64_t num_ooms = 0;
};

class DeviceCachingAllocator {
  public:
    __attribute__((noinline)) Block* malloc(int8_t device, size_t orig_size, void* stream);
    __attribute__((noinline)) void free(Block* block);
    void recordStream(Block* block, void* stream) {
        std::lock_guard<std::recursive_mutex> lock(mutex_);
        if (stream != block->stream) {
            block->stream_uses.push_back(stream);
        }
    }
    void emptyCache() {
        std::lock_guard<std::recursive_mutex> lock(mutex_);
        releaseCachedBlocks();
    }
    void attach(AllocatorTraceTracker tracker) {
        std::lock_guard<std::recursive_mutex> lock(mutex_);
        trackers_.push_back(std::move(tracker));
    }
    void setMaxSplitSize(size_t bytes) { max_split_size_ = bytes; }
    Stats stats() {
        std::lock_guard<std::recursive_mutex> lock(mutex_);
        Stats s = stats_;
        s.inactive_split = s.inactive_split_bytes = 0;
        for (Block* b : free_) {
            if (b->prev || b->next) {
                ++s.inactive_split;
                s.inactive_split_bytes += b->size;
            }
        }
        return s;
    }

  private:
    static size_t roundSize(size_t size) {
        return size < kMinBlockSize ? kMinBlockSize
                                    : kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
    }
    static size_t allocationSize(size_t size) {
        if (size <= kSmallSize) {
            return kSmallBuffer;
        }
        if (size < kMinLargeAlloc) {
            return kLargeBuffer;
        }
        return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
    }
    bool shouldSplit(const Block* b, size_t size) const {
        const size_t remaining = b->size - size;
        return b->small ? remaining >= kMinBlockSize
                        : size < max_split_size_ && remaining > kSmallSize;
    }
    void trace(TraceEntry::Action action, uint64_t addr, size_t size, void* stream, int8_t device) {
        if (trackers_.empty()) {
            return;
        }
        TraceEntry e;
        e.action_ = action;
        e.device_ = device;
        e.addr_ = addr;
        e.stream_ = stream;
        e.size_ = size;
        e.mempool_ = {0, 0};
        for (const auto& t : trackers_) {
            t(e);
        }
    }
    Block* findFree(size_t size, bool small, void* stream) {
        Block* best = nullptr;
        for (Block* b : free_) {
            if (b->small != small || b->stream != stream || b->size < size) {
                continue;
            }
            // Oversize blocks go only to requests that are oversize themselves, and not
            // much smaller than them.
            if (size < max_split_size_ && b->size >= max_split_size_) {
                continue;
            }
            if (size >= max_split_size_ && b->size >= size + kLargeBuffer) {
                continue;
            }
            if (!best || b->size < best->size || (b->size == best->size && b->ptr < best->ptr)) {
                best = b;
            }
        }
        if (best) {
            free_.erase(best);
        }
        return best;
    }
    void processEvents(int8_t device) {
        for (auto it = pending_.begin(); it != pending_.end();) {
            Block* b = *it;
            it = pending_.erase(it);
            freeBlock(b, device);
        }
    }
    __attribute__((noinline)) Block* allocBlock(size_t alloc_size, bool small, void* stream,
                                                int8_t device) {
        void* ptr = nullptr;
        if (cudaMalloc(&ptr, alloc_size) != cudaSuccess) {
            (void)cudaGetLastError();
            return nullptr;
        }
        auto* b = new Block;
        b->ptr = reinterpret_cast<uint64_t>(ptr);
        b->size = alloc_size;
        b->small = small;
        b->stream = stream;
        stats_.reserved += alloc_size;
        stats_.max_reserved = std::max(stats_.max_reserved, stats_.reserved);
        trace(TraceEntry::SEGMENT_ALLOC, b->ptr, alloc_size, stream, device);
        return b;
    }
    void releaseCachedBlocks() {
        processEvents(0);
        for (auto it = free_.begin(); it != free_.end();) {
            Block* b = *it;
            if (b->prev || b->next) {
                ++it;
                continue;
            }
            it = free_.erase(it);
            trace(TraceEntry::SEGMENT_FREE, b->ptr, b->size, b->stream, 0);
            cudaFree(reinterpret_cast<void*>(b->ptr));
            stats_.reserved -= b->size;
            delete b;
        }
    }
    void freeBlock(Block* b, int8_t device) {
        trace(TraceEntry::FREE_COMPLETED, b->ptr, b->requested, b->stream, device);
        b->pending = false;
        stats_.active -= b->size;
        for (Block* n : {b->prev, b->next}) {
            if (!n || n->allocated || n->pending) {
                continue;
            }
            free_.erase(n);
            if (n == b->prev) {
                b->ptr = n->ptr;
                b->prev = n->prev;
                if (b->prev) {
                    b->prev->next = b;
                }
            } else {
                b->next = n->next;
                if (b->next) {
                    b->next->prev = b;
                }
            }
            b->size += n->size;
            delete n;
        }
        free_.insert(b);
    }

    std::recursive_mutex mutex_;
    std::vector<AllocatorTraceTracker> trackers_;
    std::set<Block*> free_;
    std::vector<Block*> pending_;
    Stats stats_;
    size_t max_split_size_ = SIZE_MAX;
};

Block* DeviceCachingAllocator::malloc(int8_t device, size_t orig_size, void* stream) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    processEvents(device);
    const size_t size = roundSize(orig_size);
    const bool small = size <= kSmallSize;
    Block* block = findFree(size, small, stream);
    if (!block) {
        const size_t alloc_size = allocationSize(size);
        block = allocBlock(alloc_size, small, stream, device);
        if (!block) {
            releaseCachedBlocks();
            block = allocBlock(alloc_size, small, stream, device);
        }
        if (!block) {
            size_t free_bytes = 0, total = 0;
            cudaMemGetInfo(&free_bytes, &total);
            trace(TraceEntry::OOM, free_bytes, size, stream, device);
            ++stats_.num_ooms;
            return nullptr;
        }
    }
    if (shouldSplit(block, size)) {
        auto* rest = new Block;
        rest->ptr = block->ptr + size;
        rest->size = block->size - size;
        rest->small = block->small;
        rest->stream = stream;
        rest->prev = block;
        rest->next = block->next;
        if (rest->next) {
            rest->next->prev = rest;
        }
        block->next = rest;
        block->size = size;
        free_.insert(rest);
    }
    block->allocated = true;
    block->requested = orig_size;
    trace(TraceEntry::ALLOC, block->ptr, orig_size, stream, device);
    stats_.allocated += block->size;
    stats_.active += block->size;
    stats_.requested += orig_size;
    stats_.max_allocated = std::max(stats_.max_allocated, stats_.allocated);
    return block;
}

void DeviceCachingAllocator::free(Block* block) {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    block->allocated = false;
    stats_.allocated -= block->size;
    stats_.requested -= block->requested;
    trace(TraceEntry::FREE_REQUESTED, block->ptr, block->requested, block->stream, 0);
    if (!block->stream_uses.empty()) {
        block->stream_uses.clear();
        block->pending = true;
        pending_.push_back(block);
        return;
    }
    freeBlock(block, 0);
}

class NativeCachingAllocator final : public CUDAAllocator {
  public:
    bool initialized() override { return initialized_; }
    void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) override {
        device_.attach(std::move(tracker));
    }
    std::string name() override {
        const char* n = std::getenv("FAKE_TORCH_BACKEND");
        return n ? n : "native";
    }
    void init() { initialized_ = true; }
    DeviceCachingAllocator device_;
    std::map<void*, Block*> blocks_;
    std::mutex blocks_mutex_;

  private:
    bool initialized_ = false;
};

NativeCachingAllocator& native() {
    static NativeCachingAllocator a;
    return a;
}

// PyTorch sets the pointer from a static initialiser of the library.
__attribute__((constructor)) void setUp() {
    allocator.store(&native());
}

} // namespace Native
} // namespace cuda::CUDACachingAllocator
} // namespace c10

using namespace c10::cuda::CUDACachingAllocator;

// The C interface the tests drive it through (from Python with ctypes, which loads the
// library RTLD_LOCAL as Python loads PyTorch's).
FAKE_EXPORT void fake_torch_init() {
    cudaFree(nullptr); // CUDA's lazy init, as torch.cuda.init() does
    Native::native().init();
}

FAKE_EXPORT void* fake_torch_malloc(size_t size, void* stream) {
    Native::NativeCachingAllocator& a = Native::native();
    Native::Block* b = a.device_.malloc(0, size, stream);
    if (!b) {
        return nullptr;
    }
    std::lock_guard<std::mutex> lock(a.blocks_mutex_);
    a.blocks_[reinterpret_cast<void*>(b->ptr)] = b;
    return reinterpret_cast<void*>(b->ptr);
}

FAKE_EXPORT void fake_torch_free(void* ptr) {
    Native::NativeCachingAllocator& a = Native::native();
    Native::Block* b = nullptr;
    {
        std::lock_guard<std::mutex> lock(a.blocks_mutex_);
        auto it = a.blocks_.find(ptr);
        if (it == a.blocks_.end()) {
            return;
        }
        b = it->second;
        a.blocks_.erase(it);
    }
    a.device_.free(b);
}

FAKE_EXPORT void fake_torch_record_stream(void* ptr, void* stream) {
    Native::NativeCachingAllocator& a = Native::native();
    std::lock_guard<std::mutex> lock(a.blocks_mutex_);
    auto it = a.blocks_.find(ptr);
    if (it != a.blocks_.end()) {
        a.device_.recordStream(it->second, stream);
    }
}

FAKE_EXPORT void fake_torch_empty_cache() {
    Native::native().device_.emptyCache();
}

FAKE_EXPORT void fake_torch_set_max_split_size(size_t bytes) {
    Native::native().device_.setMaxSplitSize(bytes);
}

// allocated, reserved, active, requested, max_allocated, max_reserved, inactive_split,
// inactive_split_bytes, num_ooms: PyTorch's memory_stats() names.
FAKE_EXPORT void fake_torch_stats(uint64_t* out) {
    const Native::Stats s = Native::native().device_.stats();
    const uint64_t values[] = {
        s.allocated,     s.reserved,     s.active,         s.requested,
        s.max_allocated, s.max_reserved, s.inactive_split, s.inactive_split_bytes,
        s.num_ooms};
    std::memcpy(out, values, sizeof values);
}
