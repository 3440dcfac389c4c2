#include "proc_table.h"

#include "constants.h"

#include <cudaTypedefs.h>

#include <cstring>
#include <type_traits>

namespace cudasim {

namespace {

struct ProcEntry {
    const char* name;
    int version;
    bool per_thread;
    void* function;
};

// Every entry is checked at compile time against the PFN typedef that cudaTypedefs.h gives for
// that name and version, so a wrong version number or a wrong function cannot slip in.
template <typename Pfn, typename Function> void* checked(Function* function) {
    static_assert(std::is_same_v<Pfn, Function*>, "entry does not match cudaTypedefs.h");
    return reinterpret_cast<void*>(function);
}

#define ENTRY(name, version, function)                                                             \
    ProcEntry {                                                                                    \
#name, version, false, checked < PFN_##name##_v##version>(&function)                       \
    }
#define ENTRY_PER_THREAD(name, version, suffix, function)                                          \
    ProcEntry {                                                                                    \
#name, version, true, checked < PFN_##name##_v##version##_##suffix>(&function)             \
    }

const ProcEntry kEntries[] = {
    ENTRY(cuGetErrorString, 6000, cuGetErrorString),
    ENTRY(cuGetErrorName, 6000, cuGetErrorName),
    ENTRY(cuInit, 2000, cuInit),
    ENTRY(cuDriverGetVersion, 2020, cuDriverGetVersion),
    ENTRY(cuGetProcAddress, 11030, cuGetProcAddress),
    ENTRY(cuGetProcAddress, 12000, cuGetProcAddress_v2),
    // Devices
    ENTRY(cuDeviceGet, 2000, cuDeviceGet),
    ENTRY(cuDeviceGetCount, 2000, cuDeviceGetCount),
    ENTRY(cuDeviceGetName, 2000, cuDeviceGetName),
    ENTRY(cuDeviceGetUuid, 9020, cuDeviceGetUuid),
    ENTRY(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2),
    ENTRY(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
    ENTRY(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
    ENTRY(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer),
    // Contexts
    ENTRY(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
    ENTRY(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease),
    ENTRY(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
    ENTRY(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags),
    ENTRY(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2),
    ENTRY(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState),
    ENTRY(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset),
    ENTRY(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2),
    ENTRY(cuCtxCreate, 2000, cuCtxCreate),
    ENTRY(cuCtxCreate, 3020, cuCtxCreate_v2),
    ENTRY(cuCtxCreate, 11040, cuCtxCreate_v3),
    ENTRY(cuCtxCreate, 12050, cuCtxCreate_v4),
    ENTRY(cuCtxDestroy, 2000, cuCtxDestroy),
    ENTRY(cuCtxDestroy, 4000, cuCtxDestroy_v2),
    ENTRY(cuCtxPushCurrent, 2000, cuCtxPushCurrent),
    ENTRY(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2),
    ENTRY(cuCtxPopCurrent, 2000, cuCtxPopCurrent),
    ENTRY(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2),
    ENTRY(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
    ENTRY(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
    ENTRY(cuCtxGetDevice, 2000, cuCtxGetDevice),
    ENTRY(cuCtxGetDevice, 13000, cuCtxGetDevice_v2),
    ENTRY(cuCtxGetFlags, 7000, cuCtxGetFlags),
    ENTRY(cuCtxGetApiVersion, 3020, cuCtxGetApiVersion),
    ENTRY(cuCtxSynchronize, 2000, cuCtxSynchronize),
    ENTRY(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
    // Device and managed memory
    ENTRY(cuMemGetInfo, 3020, cuMemGetInfo_v2),
    ENTRY(cuMemAlloc, 3020, cuMemAlloc_v2),
    ENTRY(cuMemAllocPitch, 3020, cuMemAllocPitch_v2),
    ENTRY(cuMemFree, 3020, cuMemFree_v2),
    ENTRY(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2),
    ENTRY(cuMemAllocManaged, 6000, cuMemAllocManaged),
    ENTRY(cuPointerGetAttribute, 4000, cuPointerGetAttribute),
    ENTRY(cuPointerGetAttributes, 7000, cuPointerGetAttributes),
    // Pinned host memory
    ENTRY(cuMemAllocHost, 3020, cuMemAllocHost_v2),
    ENTRY(cuMemFreeHost, 2000, cuMemFreeHost),
    ENTRY(cuMemHostAlloc, 2020, cuMemHostAlloc),
    ENTRY(cuMemHostGetDevicePointer, 3020, cuMemHostGetDevicePointer_v2),
    ENTRY(cuMemHostGetFlags, 2030, cuMemHostGetFlags),
    ENTRY(cuMemHostRegister, 4000, cuMemHostRegister),
    ENTRY(cuMemHostRegister, 6050, cuMemHostRegister_v2),
    ENTRY(cuMemHostUnregister, 4000, cuMemHostUnregister),
    // Arrays
    ENTRY(cuArrayCreate, 3020, cuArrayCreate_v2),
    ENTRY(cuArrayGetDescriptor, 3020, cuArrayGetDescriptor_v2),
    ENTRY(cuArray3DCreate, 3020, cuArray3DCreate_v2),
    ENTRY(cuArray3DGetDescriptor, 3020, cuArray3DGetDescriptor_v2),
    ENTRY(cuArrayDestroy, 2000, cuArrayDestroy),
    ENTRY(cuMipmappedArrayCreate, 5000, cuMipmappedArrayCreate),
    ENTRY(cuMipmappedArrayDestroy, 5000, cuMipmappedArrayDestroy),
    // Virtual memory management
    ENTRY(cuMemAddressReserve, 10020, cuMemAddressReserve),
    ENTRY(cuMemAddressFree, 10020, cuMemAddressFree),
    ENTRY(cuMemCreate, 10020, cuMemCreate),
    ENTRY(cuMemRelease, 10020, cuMemRelease),
    ENTRY(cuMemMap, 10020, cuMemMap),
    ENTRY(cuMemUnmap, 10020, cuMemUnmap),
    ENTRY(cuMemSetAccess, 10020, cuMemSetAccess),
    ENTRY(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity),
    ENTRY(cuMemExportToShareableHandle, 10020, cuMemExportToShareableHandle),
    ENTRY(cuMemImportFromShareableHandle, 10020, cuMemImportFromShareableHandle),
    ENTRY(cuMemGetAllocationPropertiesFromHandle, 10020, cuMemGetAllocationPropertiesFromHandle),
    ENTRY(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle),
    // Stream-ordered allocation and pools
    ENTRY(cuMemAllocAsync, 11020, cuMemAllocAsync),
    ENTRY_PER_THREAD(cuMemAllocAsync, 11020, ptsz, cuMemAllocAsync_ptsz),
    ENTRY(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync),
    ENTRY_PER_THREAD(cuMemAllocFromPoolAsync, 11020, ptsz, cuMemAllocFromPoolAsync_ptsz),
    ENTRY(cuMemFreeAsync, 11020, cuMemFreeAsync),
    ENTRY_PER_THREAD(cuMemFreeAsync, 11020, ptsz, cuMemFreeAsync_ptsz),
    ENTRY(cuMemPoolCreate, 11020, cuMemPoolCreate),
    ENTRY(cuMemPoolDestroy, 11020, cuMemPoolDestroy),
    ENTRY(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo),
    ENTRY(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute),
    ENTRY(cuMemPoolGetAttribute, 11020, cuMemPoolGetAttribute),
    ENTRY(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool),
    ENTRY(cuDeviceGetMemPool, 11020, cuDeviceGetMemPool),
    ENTRY(cuDeviceSetMemPool, 11020, cuDeviceSetMemPool),
    // Streams and events
    ENTRY(cuStreamCreate, 2000, cuStreamCreate),
    ENTRY(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority),
    ENTRY(cuStreamDestroy, 2000, cuStreamDestroy),
    ENTRY(cuStreamDestroy, 4000, cuStreamDestroy_v2),
    ENTRY(cuStreamSynchronize, 2000, cuStreamSynchronize),
    ENTRY_PER_THREAD(cuStreamSynchronize, 7000, ptsz, cuStreamSynchronize_ptsz),
    ENTRY(cuStreamQuery, 2000, cuStreamQuery),
    ENTRY_PER_THREAD(cuStreamQuery, 7000, ptsz, cuStreamQuery_ptsz),
    ENTRY(cuStreamWaitEvent, 3020, cuStreamWaitEvent),
    ENTRY_PER_THREAD(cuStreamWaitEvent, 7000, ptsz, cuStreamWaitEvent_ptsz),
    ENTRY(cuEventCreate, 2000, cuEventCreate),
    ENTRY(cuEventRecord, 2000, cuEventRecord),
    ENTRY_PER_THREAD(cuEventRecord, 7000, ptsz, cuEventRecord_ptsz),
    ENTRY(cuEventQuery, 2000, cuEventQuery),
    ENTRY(cuEventSynchronize, 2000, cuEventSynchronize),
    ENTRY(cuEventDestroy, 2000, cuEventDestroy),
    ENTRY(cuEventDestroy, 4000, cuEventDestroy_v2),
    ENTRY(cuEventElapsedTime, 2000, cuEventElapsedTime),
    ENTRY(cuEventElapsedTime, 12080, cuEventElapsedTime_v2),
    // Launches and copies (accepted, nothing runs)
    ENTRY(cuLaunchKernel, 4000, cuLaunchKernel),
    ENTRY_PER_THREAD(cuLaunchKernel, 7000, ptsz, cuLaunchKernel_ptsz),
    ENTRY(cuMemcpy, 4000, cuMemcpy),
    ENTRY_PER_THREAD(cuMemcpy, 7000, ptds, cuMemcpy_ptds),
    ENTRY(cuMemcpyAsync, 4000, cuMemcpyAsync),
    ENTRY_PER_THREAD(cuMemcpyAsync, 7000, ptsz, cuMemcpyAsync_ptsz),
    ENTRY(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2),
    ENTRY_PER_THREAD(cuMemcpyHtoD, 7000, ptds, cuMemcpyHtoD_v2_ptds),
    ENTRY(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2),
    ENTRY_PER_THREAD(cuMemcpyDtoH, 7000, ptds, cuMemcpyDtoH_v2_ptds),
    ENTRY(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2),
    ENTRY_PER_THREAD(cuMemcpyDtoD, 7000, ptds, cuMemcpyDtoD_v2_ptds),
    ENTRY(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2),
    ENTRY_PER_THREAD(cuMemcpyHtoDAsync, 7000, ptsz, cuMemcpyHtoDAsync_v2_ptsz),
    ENTRY(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2),
    ENTRY_PER_THREAD(cuMemcpyDtoHAsync, 7000, ptsz, cuMemcpyDtoHAsync_v2_ptsz),
    ENTRY(cuMemsetD8, 3020, cuMemsetD8_v2),
    ENTRY_PER_THREAD(cuMemsetD8, 7000, ptds, cuMemsetD8_v2_ptds),
    ENTRY(cuMemsetD32, 3020, cuMemsetD32_v2),
    ENTRY_PER_THREAD(cuMemsetD32, 7000, ptds, cuMemsetD32_v2_ptds),
    ENTRY(cuMemsetD8Async, 3020, cuMemsetD8Async),
    ENTRY_PER_THREAD(cuMemsetD8Async, 7000, ptsz, cuMemsetD8Async_ptsz),
    ENTRY(cuMemsetD32Async, 3020, cuMemsetD32Async),
    ENTRY_PER_THREAD(cuMemsetD32Async, 7000, ptsz, cuMemsetD32Async_ptsz),
};

#undef ENTRY
#undef ENTRY_PER_THREAD

const ProcEntry* best_entry(const char* symbol, int cuda_version, bool per_thread,
                            bool* name_known) {
    const ProcEntry* best = nullptr;
    for (const ProcEntry& entry : kEntries) {
        if (std::strcmp(entry.name, symbol) != 0) {
            continue;
        }
        *name_known = true;
        if (entry.per_thread != per_thread || entry.version > cuda_version) {
            continue;
        }
        if (best == nullptr || entry.version > best->version) {
            best = &entry;
        }
    }
    return best;
}

} // namespace

CUresult resolve_proc(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                      CUdriverProcAddressQueryResult* status) {
    constexpr cuuint64_t kKnownFlags =
        CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if (symbol == nullptr || pfn == nullptr || (flags & ~kKnownFlags) != 0 ||
        cuda_version > kDriverVersion) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    bool name_known = false;
    const ProcEntry* entry = nullptr;
    // The per-thread variant wins when asked for; without one, the legacy function serves.
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0) {
        entry = best_entry(symbol, cuda_version, /*per_thread=*/true, &name_known);
    }
    if (entry == nullptr) {
        entry = best_entry(symbol, cuda_version, /*per_thread=*/false, &name_known);
    }
    // A symbol that is not there is not an error: CUDA_SUCCESS with a NULL pointer and the
    // reason in the status, as cuda.h documents and an H200 (driver 580.159) answers, "" included.
    *pfn = entry != nullptr ? entry->function : nullptr;
    if (status != nullptr) {
        *status = entry != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS
                  : name_known     ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                   : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    }
    return CUDA_SUCCESS;
}

} // namespace cudasim
