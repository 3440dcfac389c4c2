#include "analysis/caching/caching_allocators.h"

#include "symbols/stack_pattern.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

// Each entry names functions of the allocator's own code that only its caching path runs,
// never a whole library: PyTorch without its cache (PYTORCH_NO_CUDA_MEMORY_CACHING=1),
// CuPy without its pool and JAX's platform allocator call CUDA from the same libraries,
// and what they still hold at exit is the program's.
std::vector<CachingAllocator> builtinEntries() {
    return {
        {"PyTorch CUDA caching allocator",
         {"c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::*",
          "c10::cuda::CUDACachingAllocator::Native::*ExpandableSegment::*"},
         "its segments (cudaMalloc, or cuMemCreate + cuMemMap with expandable_segments) stay "
         "reserved after the tensors in them are freed, until torch.cuda.empty_cache(); "
         "PyTorch never returns them at exit",
         "built-in"},
        {"PyTorch pinned-memory caching allocator",
         {"at::CachingHostAllocatorImpl<*", "*CUDACachingHostAllocatorImpl::*"},
         "pinned host blocks (cudaHostAlloc) are kept for reuse after the tensors are freed",
         "built-in"},
        {"CuPy memory pool",
         {"*SingleDeviceMemoryPool*"},
         "cupy.cuda.MemoryPool keeps freed chunks for reuse until free_all_blocks()",
         "built-in"},
        {"CuPy pinned memory pool",
         {"*PinnedMemoryPool*"},
         "cupy.cuda.PinnedMemoryPool keeps freed pinned buffers until free_all_blocks()",
         "built-in"},
        {"XLA BFC allocator",
         {"*BFCAllocator::*"},
         "JAX/XLA's best-fit-with-coalescing allocator preallocates most of the device "
         "(XLA_PYTHON_CLIENT_PREALLOCATE) and grows, never returning regions while the client "
         "lives",
         "built-in"},
        {"RMM pool",
         {"rmm::mr::pool_memory_resource<*", "rmm::mr::arena_memory_resource<*",
          "rmm::mr::fixed_size_memory_resource<*", "rmm::mr::binning_memory_resource<*",
          "rmm::mr::detail::stream_ordered_memory_resource<*"},
         "RMM's pool, arena, fixed-size and binning resources keep upstream allocations for "
         "reuse until the resource is destroyed",
         "built-in"},
    };
}

} // namespace

std::shared_ptr<const CachingAllocatorTable> CachingAllocatorTable::builtin() {
    static const auto table = [] {
        auto t = std::make_shared<CachingAllocatorTable>();
        t->entries_ = builtinEntries();
        return t;
    }();
    return table;
}

void CachingAllocatorTable::extend(const std::vector<PatternLine>& lines) {
    // Entries this file has already added to: a built-in one named again is replaced once.
    std::vector<std::string> seen;
    for (const PatternLine& line : lines) {
        if (line.text.front() == '-') {
            const std::string name = trimmed(line.text.substr(1));
            auto it = std::find_if(entries_.begin(), entries_.end(),
                                   [&](const CachingAllocator& e) { return e.name == name; });
            if (name.empty() || it == entries_.end()) {
                throw PatternFileError(line.origin + ": no caching allocator named '" + name +
                                       "' to drop");
            }
            entries_.erase(it);
            continue;
        }
        const size_t colon = line.text.find(": ");
        const std::string name =
            colon == std::string::npos ? std::string() : trimmed(line.text.substr(0, colon));
        const std::string pattern =
            colon == std::string::npos ? std::string() : trimmed(line.text.substr(colon + 2));
        if (name.empty() || pattern.empty()) {
            throw PatternFileError(line.origin + ": expected 'NAME: PATTERN' or '-NAME', got '" +
                                   line.text + "'");
        }
        auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const CachingAllocator& e) { return e.name == name; });
        const bool first_here = std::find(seen.begin(), seen.end(), name) == seen.end();
        if (first_here) {
            seen.push_back(name);
        }
        if (it == entries_.end()) {
            // A new entry: before the built-in ones, so that it can claim a stack first.
            it = entries_.insert(entries_.begin() + static_cast<ptrdiff_t>(seen.size() - 1),
                                 CachingAllocator{name, {}, "", line.origin});
        } else if (first_here) {
            it->patterns.clear();
            it->why.clear();
            it->origin = line.origin;
        }
        it->patterns.push_back(pattern);
    }
}

const CachingAllocator* CachingAllocatorTable::match(const Stack& stack) const {
    for (const CachingAllocator& e : entries_) {
        for (const std::string& pattern : e.patterns) {
            if (stackMatches(pattern, stack)) {
                return &e;
            }
        }
    }
    return nullptr;
}

std::string CachingAllocatorTable::text() const {
    std::string out;
    for (const CachingAllocator& e : entries_) {
        out += "# " + e.name + " (" + e.origin + ")" + (e.why.empty() ? "" : ": " + e.why) + "\n";
        for (const std::string& p : e.patterns) {
            out += e.name + ": " + p + "\n";
        }
    }
    return out;
}

} // namespace gmt::analyzer
