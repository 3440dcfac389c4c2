// Runtime API: devices, versions, device properties, reset and synchronization.
#include "api_common.h"

#include <cstring>

using namespace cudasim::rt;

static_assert(static_cast<int>(cudaDevAttrComputeCapabilityMajor) ==
                  static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
              "runtime device attributes are driver attributes by value");
static_assert(static_cast<int>(cudaDevAttrMemoryPoolsSupported) ==
              static_cast<int>(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED));

cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    *count = 0; // also the answer when there is no driver or no device
    return finish(device_count(count));
}

cudaError_t cudaSetDevice(int device) {
    return finish(select_device(device));
}

cudaError_t cudaInitDevice(int device, unsigned int /*deviceFlags*/, unsigned int /*flags*/) {
    return finish(select_device(device));
}

cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    return finish(current_device(device));
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
    CUDASIM_WITH_DRIVER(api);
    int device = 0;
    current_device(&device);
    return finish(api->cuDevicePrimaryCtxSetFlags(device, flags));
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
    CUDASIM_WITH_DRIVER(api);
    if (flags == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    int device = 0;
    current_device(&device);
    int active = 0;
    return finish(api->cuDevicePrimaryCtxGetState(device, flags, &active));
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
    CUDASIM_WITH_DRIVER(api);
    if (value == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    return finish(api->cuDeviceGetAttribute(value, static_cast<CUdevice_attribute>(attr), device));
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device) {
    CUDASIM_WITH_DRIVER(api);
    if (prop == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    CUdevice dev = 0;
    if (CUresult r = api->cuDeviceGet(&dev, device); r != CUDA_SUCCESS) {
        return finish(r);
    }
    cudaDeviceProp p;
    std::memset(&p, 0, sizeof(p));
    api->cuDeviceGetName(p.name, sizeof(p.name), dev);
    CUuuid uuid{};
    api->cuDeviceGetUuid(&uuid, dev);
    std::memcpy(p.uuid.bytes, uuid.bytes, sizeof(p.uuid.bytes));
    size_t total = 0;
    api->cuDeviceTotalMem(&total, dev);
    p.totalGlobalMem = total;
    auto attr = [api, dev](CUdevice_attribute a) {
        int value = 0;
        api->cuDeviceGetAttribute(&value, a, dev);
        return value;
    };
    p.sharedMemPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    p.regsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    p.warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    p.memPitch = attr(CU_DEVICE_ATTRIBUTE_MAX_PITCH);
    p.maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    p.maxThreadsDim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    p.maxThreadsDim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    p.maxThreadsDim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    p.maxGridSize[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    p.maxGridSize[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    p.maxGridSize[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    p.totalConstMem = attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
    p.major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    p.minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    p.textureAlignment = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
    p.texturePitchAlignment = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
    p.multiProcessorCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    p.integrated = attr(CU_DEVICE_ATTRIBUTE_INTEGRATED);
    p.canMapHostMemory = attr(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
    p.maxTexture1D = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
    p.maxTexture2D[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
    p.maxTexture2D[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
    p.maxTexture3D[0] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
    p.maxTexture3D[1] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
    p.maxTexture3D[2] = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
    p.surfaceAlignment = attr(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT);
    p.concurrentKernels = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
    p.ECCEnabled = attr(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
    p.pciBusID = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
    p.pciDeviceID = attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
    p.pciDomainID = attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
    p.tccDriver = attr(CU_DEVICE_ATTRIBUTE_TCC_DRIVER);
    p.asyncEngineCount = attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    p.unifiedAddressing = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
    p.memoryBusWidth = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    p.l2CacheSize = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    p.persistingL2CacheMaxSize = attr(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
    p.maxThreadsPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    p.streamPrioritiesSupported = attr(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED);
    p.globalL1CacheSupported = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED);
    p.localL1CacheSupported = attr(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED);
    p.sharedMemPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    p.regsPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    p.managedMemory = attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
    p.isMultiGpuBoard = attr(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD);
    p.multiGpuBoardGroupID = attr(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID);
    p.hostNativeAtomicSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED);
    p.pageableMemoryAccess = attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
    p.concurrentManagedAccess = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
    p.computePreemptionSupported = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED);
    p.canUseHostPointerForRegisteredMem =
        attr(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM);
    p.cooperativeLaunch = attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
    p.sharedMemPerBlockOptin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    p.pageableMemoryAccessUsesHostPageTables =
        attr(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES);
    p.directManagedMemAccessFromHost =
        attr(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST);
    p.maxBlocksPerMultiProcessor = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    p.accessPolicyMaxWindowSize = attr(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
    p.reservedSharedMemPerBlock = attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
    p.hostRegisterSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED);
    p.sparseCudaArraySupported = attr(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED);
    p.hostRegisterReadOnlySupported = attr(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED);
    p.timelineSemaphoreInteropSupported =
        attr(CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED);
    p.memoryPoolsSupported = attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
    p.gpuDirectRDMASupported = attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
    p.gpuDirectRDMAFlushWritesOptions =
        attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS);
    p.gpuDirectRDMAWritesOrdering = attr(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
    p.memoryPoolSupportedHandleTypes = attr(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);
    p.deferredMappingCudaArraySupported =
        attr(CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED);
    p.ipcEventSupported = attr(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED);
    p.clusterLaunch = attr(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
    p.unifiedFunctionPointers = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS);
    p.deviceNumaConfig = attr(CU_DEVICE_ATTRIBUTE_NUMA_CONFIG);
    p.deviceNumaId = attr(CU_DEVICE_ATTRIBUTE_NUMA_ID);
    p.mpsEnabled = attr(CU_DEVICE_ATTRIBUTE_MPS_ENABLED);
    p.hostNumaId = attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    p.gpuPciDeviceID = attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID);
    p.gpuPciSubsystemID = attr(CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID);
    p.hostNumaMultinodeIpcSupported = attr(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED);
    *prop = p;
    return cudaSuccess;
}

cudaError_t cudaDeviceReset() {
    CUDASIM_WITH_DRIVER(api);
    (void)api;
    int device = 0;
    current_device(&device);
    // Frees everything the device's primary context owns (cuDevicePrimaryCtxReset_v2).
    return finish(reset_device(device));
}

cudaError_t cudaDeviceSynchronize() {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuCtxSynchronize(nullptr));
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuMemGetInfo(free, total));
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
    if (driverVersion == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    const DriverApi* api = nullptr;
    driver(&api); // a driver without devices still has a version
    // Without a usable driver the answer is 0, and that is not an error.
    if (api->cuDriverGetVersion == nullptr) {
        *driverVersion = 0;
        return cudaSuccess;
    }
    return finish(api->cuDriverGetVersion(driverVersion));
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
    if (runtimeVersion == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}
