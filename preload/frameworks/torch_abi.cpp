#include "torch_abi.h"

namespace gmt::preload::frameworks {

namespace {

using A = format::BlockAction;
constexpr A kNone = static_cast<A>(0);

// torch 2.11.0+cu130, seen on an H200: the vtable slots from the headers
// (c10/core/Allocator.h, c10/core/CachingDeviceAllocator.h,
// c10/cuda/CUDACachingAllocator.h) and confirmed by calling them, the offsets by offsetof
// in a program built against those headers; TraceEntry is 136 bytes.
constexpr TorchAbi kTable[] = {
    {"2.11",
     6,
     44,
     49,
     0,
     4,
     8,
     32,
     40,
     48,
     {A::Alloc, A::FreeRequested, A::FreeCompleted, A::SegmentAlloc, A::SegmentFree, A::SegmentMap,
      A::SegmentUnmap, kNone /* SNAPSHOT */, A::Oom, kNone, kNone, kNone, kNone, kNone, kNone,
      kNone}},
};

} // namespace

const TorchAbi* torchAbiFor(std::string_view version) {
    for (const TorchAbi& abi : kTable) {
        // "2.11" matches "2.11", "2.11.0", "2.11.1+cu130", not "2.110".
        if (version.substr(0, abi.version.size()) == abi.version &&
            (version.size() == abi.version.size() || version[abi.version.size()] == '.' ||
             version[abi.version.size()] == '+')) {
            return &abi;
        }
    }
    return nullptr;
}

} // namespace gmt::preload::frameworks
