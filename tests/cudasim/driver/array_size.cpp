#include "array_size.h"

#include <algorithm>

namespace cudasim {

std::optional<uint64_t> element_bytes(CUarray_format format, unsigned channels) {
    uint64_t channel_bytes = 0;
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        channel_bytes = 1;
        break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        channel_bytes = 2;
        break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        channel_bytes = 4;
        break;
    // Packed formats carry their channel count in the format itself.
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
        return 1;
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
        return 2;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2:
    case CU_AD_FORMAT_UNORM_INT_101010_2:
        return 4;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4:
        return 8;
    default:
        return std::nullopt;
    }
    if (channels != 1 && channels != 2 && channels != 4) {
        return std::nullopt;
    }
    return channel_bytes * channels;
}

std::optional<uint64_t> array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& d) {
    return mipmapped_array_bytes(d, 1);
}

std::optional<uint64_t> mipmapped_array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& d, unsigned levels) {
    auto element = element_bytes(d.Format, d.NumChannels);
    if (!element || d.Width == 0 || levels == 0) {
        return std::nullopt;
    }
    bool layered = (d.Flags & CUDA_ARRAY3D_LAYERED) != 0;
    bool cubemap = (d.Flags & CUDA_ARRAY3D_CUBEMAP) != 0;
    if (cubemap &&
        (d.Width != d.Height || d.Depth == 0 || d.Depth % 6 != 0 || (!layered && d.Depth != 6))) {
        return std::nullopt;
    }
    // Layers and cube faces do not shrink from one mipmap level to the next; depth does.
    bool depth_is_slices = layered || cubemap;
    uint64_t total = 0;
    for (unsigned level = 0; level < levels; ++level) {
        uint64_t width = std::max<uint64_t>(1, d.Width >> level);
        uint64_t height = d.Height == 0 ? 1 : std::max<uint64_t>(1, d.Height >> level);
        uint64_t depth = d.Depth == 0      ? 1
                         : depth_is_slices ? d.Depth
                                           : std::max<uint64_t>(1, d.Depth >> level);
        total += width * height * depth * *element;
        if (width == 1 && height == 1 && (depth == 1 || depth_is_slices)) {
            break; // further levels would be the same 1x1 texel; CUDA does not create them
        }
    }
    return total;
}

} // namespace cudasim
