#include "array_sizes.h"

#include <algorithm>

namespace gmt::preload {
namespace {

// Bytes of one element: channel bytes times channels, except for the packed formats, whose
// size is fixed by the format whatever NumChannels says. tests/recorder/array_sizes_test.cpp
// checks every format against the simulator's independent reckoning (from bits per channel).
uint64_t elementBytes(CUarray_format format, unsigned int channels) {
    switch (format) {
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2ull * channels;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4ull * channels;
    // Packed normalized formats carry their channel count in the format itself.
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
        return 2;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2:
    case CU_AD_FORMAT_UNORM_INT_101010_2: // R10G10B10A2 in one 32-bit element (cuda.h)
        return 4;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4:
        return 8;
    default:
        return 1ull * channels;
    }
}

// Levels of a mipmap halve each extent (never below 1) from the full-size one; the layer
// count of a layered array is not an extent and stays.
uint64_t levelsBytes(uint64_t element, uint64_t w, uint64_t h, uint64_t d, unsigned int levels,
                     bool layered = false) {
    uint64_t total = 0;
    levels = std::max(levels, 1u);
    for (unsigned int l = 0; l < levels; ++l) {
        total += element * std::max<uint64_t>(w, 1) * std::max<uint64_t>(h, 1) *
                 std::max<uint64_t>(d, 1);
        if (w == 1 && h <= 1 && (d <= 1 || layered)) {
            break; // CUDA creates no levels past 1x1
        }
        w = std::max<uint64_t>(w / 2, 1);
        h = h ? std::max<uint64_t>(h / 2, 1) : 0;
        d = (d && !layered) ? std::max<uint64_t>(d / 2, 1) : d;
    }
    return total;
}

} // namespace

uint64_t arrayBytes(const CUDA_ARRAY_DESCRIPTOR& desc) {
    return levelsBytes(elementBytes(desc.Format, desc.NumChannels), desc.Width, desc.Height, 0, 1);
}

uint64_t arrayBytes(const CUDA_ARRAY3D_DESCRIPTOR& desc, unsigned int levels) {
    bool layered = (desc.Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    uint64_t depth = desc.Depth;
    if ((desc.Flags & CUDA_ARRAY3D_CUBEMAP) && !(desc.Flags & CUDA_ARRAY3D_LAYERED)) {
        depth = 6; // a cubemap is six faces even when Depth says 6 or is left 0
    }
    return levelsBytes(elementBytes(desc.Format, desc.NumChannels), desc.Width, desc.Height, depth,
                       levels, layered);
}

uint64_t arrayBytes(const cudaChannelFormatDesc& desc, cudaExtent extent, unsigned int levels) {
    uint64_t bits = static_cast<uint64_t>(desc.x) + desc.y + desc.z + desc.w;
    uint64_t element = std::max<uint64_t>((bits + 7) / 8, 1);
    return levelsBytes(element, extent.width, extent.height, extent.depth, levels);
}

} // namespace gmt::preload
