// Driver API: initialization, versions and device queries.
#include "api_common.h"
#include "constants.h"
#include "device_attributes.h"

#include <cstdio>
#include <cstring>

using namespace cudasim;

CUresult cuInit(unsigned int Flags) {
    Locked driver;
    return driver->init(Flags);
}

CUresult cuDriverGetVersion(int* driverVersion) {
    if (driverVersion == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *driverVersion = kDriverVersion;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (count == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *count = driver->device_count();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (device == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUDASIM_TRY(driver->check_device(ordinal));
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    if (name == nullptr || len <= 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::snprintf(name, static_cast<size_t>(len), "%s", kDeviceName);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
    return answer_device_query(bytes, dev,
                               [&](Driver& driver) { return driver.memory(dev).capacity(); });
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
    return answer_device_query(pi, dev, [&](Driver&) { return device_attribute(attrib, dev); });
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    if (uuid == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // Stable per ordinal, and recognizably simulated ("cudasim-gpu-" + ordinal).
    char bytes[sizeof(uuid->bytes) + 1];
    std::snprintf(bytes, sizeof(bytes), "cudasim-gpu-%04d", dev);
    std::memcpy(uuid->bytes, bytes, sizeof(uuid->bytes));
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
    return cuDeviceGetUuid_v2(uuid, dev);
}

CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    CUDASIM_TRY(driver->check_device(peerDev));
    if (canAccessPeer == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *canAccessPeer = dev != peerDev ? 1 : 0;
    return CUDA_SUCCESS;
}
