// What the recorder knows of PyTorch's CUDA caching allocator per PyTorch version, without its
// headers: where CUDAAllocator's methods sit in its vtable and where TraceEntry keeps its
// fields. One row per version whose layout was read and checked on a real GPU; any other
// version is left alone (the trace says so). The one table: a new version is a new row.
#pragma once

#include <gpumemtrace/format/event.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gmt::preload::frameworks {

struct TorchAbi {
    std::string_view version; // "2.11": the major.minor release the row describes
    // 8-byte vtable slots of c10::cuda::CUDACachingAllocator::CUDAAllocator (counting the
    // two destructor entries of c10::Allocator).
    int initialized_slot; // bool initialized()
    int attach_slot; // void attachAllocatorTraceTracker(std::function<void(const TraceEntry&)>)
    int name_slot;   // std::string name()
    // c10::CachingDeviceAllocator::TraceEntry.
    size_t action_offset; // enum Action (int)
    size_t device_offset; // int8_t (c10::DeviceIndex)
    size_t addr_offset;   // size_t; for OOM the device's free bytes
    size_t stream_offset; // cudaStream_t
    size_t size_offset;   // size_t
    size_t pool_offset;   // std::pair<uint64_t, uint64_t> (MempoolId_t)
    // TraceEntry::Action value -> what the trace records (0: not recorded, e.g. SNAPSHOT).
    static constexpr size_t kActions = 16;
    format::BlockAction actions[kActions];
};

// The row for `version` ("2.11.0+cu130"), or null.
const TorchAbi* torchAbiFor(std::string_view version);

} // namespace gmt::preload::frameworks
