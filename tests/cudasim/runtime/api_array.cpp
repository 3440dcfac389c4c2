// Runtime API: CUDA arrays (cudaMallocArray -> cuArrayCreate_v2, with flags or 3D ->
// cuArray3DCreate_v2, mipmapped -> cuMipmappedArrayCreate).
#include "api_common.h"
#include "channel_format.h"

using namespace cudasim::rt;

namespace {

cudaError_t describe(const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned flags,
                     CUDA_ARRAY3D_DESCRIPTOR* out) {
    if (desc == nullptr) {
        return cudaErrorInvalidValue;
    }
    auto format = array_format(*desc);
    if (!format) {
        return cudaErrorInvalidChannelDescriptor;
    }
    *out = CUDA_ARRAY3D_DESCRIPTOR{};
    out->Width = extent.width;
    out->Height = extent.height;
    out->Depth = extent.depth;
    out->Format = format->format;
    out->NumChannels = format->channels;
    out->Flags = flags; // cudaArray* flags have the values of the CUDA_ARRAY3D_* ones
    return cudaSuccess;
}

} // namespace

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                            enum cudaChannelFormatKind f) {
    return cudaChannelFormatDesc{x, y, z, w, f};
}

cudaError_t cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc,
                            size_t width, size_t height, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (cudaError_t e = describe(desc, cudaExtent{width, height, 0}, flags, &d);
        e != cudaSuccess || array == nullptr) {
        return finish(e != cudaSuccess ? e : cudaErrorInvalidValue);
    }
    CUarray handle = nullptr;
    CUresult r;
    if (flags == cudaArrayDefault) {
        CUDA_ARRAY_DESCRIPTOR plain{d.Width, d.Height, d.Format, d.NumChannels};
        r = api->cuArrayCreate(&handle, &plain);
    } else {
        r = api->cuArray3DCreate(&handle, &d);
    }
    if (r == CUDA_SUCCESS) {
        *array = reinterpret_cast<cudaArray_t>(handle);
    }
    return finish(r);
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc,
                              struct cudaExtent extent, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (cudaError_t e = describe(desc, extent, flags, &d); e != cudaSuccess || array == nullptr) {
        return finish(e != cudaSuccess ? e : cudaErrorInvalidValue);
    }
    CUarray handle = nullptr;
    CUresult r = api->cuArray3DCreate(&handle, &d);
    if (r == CUDA_SUCCESS) {
        *array = reinterpret_cast<cudaArray_t>(handle);
    }
    return finish(r);
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* mipmappedArray,
                                     const struct cudaChannelFormatDesc* desc,
                                     struct cudaExtent extent, unsigned int numLevels,
                                     unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (cudaError_t e = describe(desc, extent, flags, &d);
        e != cudaSuccess || mipmappedArray == nullptr) {
        return finish(e != cudaSuccess ? e : cudaErrorInvalidValue);
    }
    CUmipmappedArray handle = nullptr;
    CUresult r = api->cuMipmappedArrayCreate(&handle, &d, numLevels);
    if (r == CUDA_SUCCESS) {
        *mipmappedArray = reinterpret_cast<cudaMipmappedArray_t>(handle);
    }
    return finish(r);
}

cudaError_t cudaFreeArray(cudaArray_t array) {
    CUDASIM_WITH_CONTEXT(api);
    if (array == nullptr) {
        return cudaSuccess;
    }
    return finish(api->cuArrayDestroy(reinterpret_cast<CUarray>(array)));
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray) {
    CUDASIM_WITH_CONTEXT(api);
    if (mipmappedArray == nullptr) {
        return cudaSuccess;
    }
    return finish(api->cuMipmappedArrayDestroy(reinterpret_cast<CUmipmappedArray>(mipmappedArray)));
}
