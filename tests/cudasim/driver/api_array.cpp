// Driver API: CUDA arrays and mipmapped arrays (device memory without a pointer).
#include "api_common.h"
#include "array_size.h"

using namespace cudasim;

namespace {

template <typename Array> CUresult place(Driver& driver, CUcontext ctx, uint64_t bytes, Array* a) {
    auto block = driver.memory(ctx->device).allocate(bytes, Arena::Device);
    if (!block) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->ctx = ctx;
    a->device = ctx->device;
    a->bytes = bytes;
    a->block = *block;
    return CUDA_SUCCESS;
}

CUresult create_array(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR& descriptor) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    auto bytes = array_bytes(descriptor);
    if (pHandle == nullptr || !bytes) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto* array = new CUarray_st{};
    array->descriptor = descriptor;
    if (CUresult result = place(*driver, ctx, *bytes, array); result != CUDA_SUCCESS) {
        delete array;
        return result;
    }
    driver->arrays.insert(array);
    *pHandle = array;
    return CUDA_SUCCESS;
}

// Both descriptor queries: the handle is checked before the out-parameter, as the driver does.
template <typename Descriptor, typename Copy>
CUresult read_descriptor(Descriptor* out, CUarray hArray, Copy&& copy) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (!driver->arrays.contains(hArray)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (out == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    copy(*out, hArray->descriptor);
    return CUDA_SUCCESS;
}

} // namespace

CUresult cuArrayCreate_v2(CUarray* pHandle, const CUDA_ARRAY_DESCRIPTOR* pAllocateArray) {
    if (pAllocateArray == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    descriptor.Width = pAllocateArray->Width;
    descriptor.Height = pAllocateArray->Height;
    descriptor.Format = pAllocateArray->Format;
    descriptor.NumChannels = pAllocateArray->NumChannels;
    return create_array(pHandle, descriptor);
}

CUresult cuArray3DCreate_v2(CUarray* pHandle, const CUDA_ARRAY3D_DESCRIPTOR* pAllocateArray) {
    if (pAllocateArray == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return create_array(pHandle, *pAllocateArray);
}

CUresult cuArrayDestroy(CUarray hArray) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (!driver->arrays.contains(hArray)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    driver->destroy_array(hArray);
    return CUDA_SUCCESS;
}

CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* pArrayDescriptor, CUarray hArray) {
    return read_descriptor(pArrayDescriptor, hArray,
                           [](CUDA_ARRAY_DESCRIPTOR& out, const CUDA_ARRAY3D_DESCRIPTOR& d) {
                               out.Width = d.Width;
                               out.Height = d.Height;
                               out.Format = d.Format;
                               out.NumChannels = d.NumChannels;
                           });
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* pArrayDescriptor, CUarray hArray) {
    return read_descriptor(
        pArrayDescriptor, hArray,
        [](CUDA_ARRAY3D_DESCRIPTOR& out, const CUDA_ARRAY3D_DESCRIPTOR& d) { out = d; });
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray* pHandle,
                                const CUDA_ARRAY3D_DESCRIPTOR* pMipmappedArrayDesc,
                                unsigned int numMipmapLevels) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (pHandle == nullptr || pMipmappedArrayDesc == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto bytes = mipmapped_array_bytes(*pMipmappedArrayDesc, numMipmapLevels);
    if (!bytes) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto* array = new CUmipmappedArray_st{};
    array->descriptor = *pMipmappedArrayDesc;
    array->levels = numMipmapLevels;
    if (CUresult result = place(*driver, ctx, *bytes, array); result != CUDA_SUCCESS) {
        delete array;
        return result;
    }
    driver->mipmapped_arrays.insert(array);
    *pHandle = array;
    return CUDA_SUCCESS;
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (!driver->mipmapped_arrays.contains(hMipmappedArray)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    driver->destroy_mipmapped_array(hMipmappedArray);
    return CUDA_SUCCESS;
}
