#include "driver_api.h"

#include "errors.h"

#include <dlfcn.h>
#include <mutex>

namespace cudasim::rt {

namespace {

// The version NVIDIA's runtime asks its bootstrap questions at (observed on CUDA 13.0).
constexpr int kBootstrapVersion = 12000;
constexpr int kLegacyResolverVersion = 11030;

template <typename Pfn> Pfn as(void* function) {
    return reinterpret_cast<Pfn>(function);
}

cudaError_t load(DriverApi& api) {
    void* library = dlopen("libcuda.so.1", RTLD_NOW);
    if (library == nullptr) {
        return cudaErrorInsufficientDriver;
    }
    auto bootstrap = as<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
    if (bootstrap == nullptr) {
        return cudaErrorInsufficientDriver;
    }
    void* function = nullptr;
    CUdriverProcAddressQueryResult status{};
    // The answer is not needed (no such symbol); the question is part of the sequence a
    // tracer expects to see.
    bootstrap("", &function, kBootstrapVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    if (bootstrap("cuInit", &function, kBootstrapVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=
            CUDA_SUCCESS ||
        function == nullptr) {
        return cudaErrorInsufficientDriver;
    }
    api.cuInit = as<PFN_cuInit_v2000>(function);
    // Asked for at both ABI versions, as NVIDIA's runtime does; the 12000 one (the 5-argument
    // cuGetProcAddress_v2) is what everything else goes through.
    bootstrap("cuGetProcAddress", &function, kLegacyResolverVersion, CU_GET_PROC_ADDRESS_DEFAULT,
              &status);
    function = nullptr;
    if (bootstrap("cuGetProcAddress", &function, kBootstrapVersion, CU_GET_PROC_ADDRESS_DEFAULT,
                  &status) != CUDA_SUCCESS ||
        function == nullptr) {
        return cudaErrorInsufficientDriver;
    }
    api.cuGetProcAddress = as<PFN_cuGetProcAddress_v12000>(function);

    auto resolve = [&api](const char* name, int version, cuuint64_t flags) -> void* {
        void* resolved = nullptr;
        CUdriverProcAddressQueryResult found{};
        if (api.cuGetProcAddress(name, &resolved, version, flags, &found) != CUDA_SUCCESS) {
            return nullptr;
        }
        return resolved;
    };
#define CUDASIM_RESOLVE(name, version)                                                             \
    api.name = as<PFN_##name##_v##version>(resolve(#name, version, CU_GET_PROC_ADDRESS_DEFAULT));
#define CUDASIM_RESOLVE_PER_THREAD(name, version, suffix)                                          \
    api.name##_##suffix = as<PFN_##name##_v##version##_##suffix>(                                  \
        resolve(#name, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
    CUDASIM_DRIVER_FUNCTIONS(CUDASIM_RESOLVE, CUDASIM_RESOLVE_PER_THREAD)
#undef CUDASIM_RESOLVE
#undef CUDASIM_RESOLVE_PER_THREAD
    // Initialized last, so that version queries work even when there is no device.
    return to_runtime_error(api.cuInit(0));
}

} // namespace

cudaError_t load_driver(const DriverApi** api) {
    // Never destroyed: programs call the runtime from atexit handlers.
    static DriverApi* loaded = new DriverApi();
    static cudaError_t outcome = cudaSuccess;
    static std::once_flag once;
    std::call_once(once, [] { outcome = load(*loaded); });
    *api = loaded;
    return outcome;
}

} // namespace cudasim::rt
