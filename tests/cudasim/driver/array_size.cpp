#include "array_size.h"

#include <algorithm>

namespace cudasim {

namespace {

// One element of a format, in the words of cuda.h's comment on it.
struct Layout {
    enum class Channels {
        FromDescriptor, // "Unsigned 16-bit integers": NumChannels channels (1, 2 or 4) of `bits`
        InFormat,       // "2 channel unsigned 8-bit normalized integer", "4 channel unorm
                        // R10G10B10A2": the format fixes the channels; `bits` is all of them
        NotModelled,    // block-compressed and YUV formats
    };
    Channels channels;
    unsigned bits;
};

constexpr Layout per_channel(unsigned bits) {
    return {Layout::Channels::FromDescriptor, bits};
}
constexpr Layout in_format(unsigned channels, unsigned bits_each) {
    return {Layout::Channels::InFormat, channels * bits_each};
}
constexpr Layout not_modelled{Layout::Channels::NotModelled, 0};

std::optional<Layout> layout(CUarray_format format) {
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return per_channel(8);
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return per_channel(16);
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return per_channel(32);
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1:
        return in_format(1, 8);
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
        return in_format(2, 8);
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
        return in_format(4, 8);
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1:
        return in_format(1, 16);
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2:
        return in_format(2, 16);
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4:
        return in_format(4, 16);
    // 10 + 10 + 10 + 2 bits packed into one 32-bit element, as the runtime's channel
    // descriptor for it (cudaChannelFormatKindUnsignedNormalized1010102) also says.
    case CU_AD_FORMAT_UNORM_INT_101010_2:
        return Layout{Layout::Channels::InFormat, 10 + 10 + 10 + 2};
    case CU_AD_FORMAT_BC1_UNORM:
    case CU_AD_FORMAT_BC1_UNORM_SRGB:
    case CU_AD_FORMAT_BC2_UNORM:
    case CU_AD_FORMAT_BC2_UNORM_SRGB:
    case CU_AD_FORMAT_BC3_UNORM:
    case CU_AD_FORMAT_BC3_UNORM_SRGB:
    case CU_AD_FORMAT_BC4_UNORM:
    case CU_AD_FORMAT_BC4_SNORM:
    case CU_AD_FORMAT_BC5_UNORM:
    case CU_AD_FORMAT_BC5_SNORM:
    case CU_AD_FORMAT_BC6H_UF16:
    case CU_AD_FORMAT_BC6H_SF16:
    case CU_AD_FORMAT_BC7_UNORM:
    case CU_AD_FORMAT_BC7_UNORM_SRGB:
    case CU_AD_FORMAT_NV12:
    case CU_AD_FORMAT_NV16:
    case CU_AD_FORMAT_P010:
    case CU_AD_FORMAT_P016:
    case CU_AD_FORMAT_P210:
    case CU_AD_FORMAT_P216:
    case CU_AD_FORMAT_YUY2:
    case CU_AD_FORMAT_Y210:
    case CU_AD_FORMAT_Y216:
    case CU_AD_FORMAT_AYUV:
    case CU_AD_FORMAT_Y410:
    case CU_AD_FORMAT_Y416:
    case CU_AD_FORMAT_Y444_PLANAR8:
    case CU_AD_FORMAT_Y444_PLANAR10:
    case CU_AD_FORMAT_YUV444_8bit_SemiPlanar:
    case CU_AD_FORMAT_YUV444_16bit_SemiPlanar:
        return not_modelled;
    default:
        return std::nullopt;
    }
}

} // namespace

bool format_known(CUarray_format format) {
    return layout(format).has_value();
}

std::optional<uint64_t> element_bytes(CUarray_format format, unsigned channels) {
    auto l = layout(format);
    if (!l) {
        return std::nullopt;
    }
    switch (l->channels) {
    case Layout::Channels::FromDescriptor:
        if (channels != 1 && channels != 2 && channels != 4) {
            return std::nullopt;
        }
        return uint64_t{l->bits} * channels / 8;
    case Layout::Channels::InFormat:
        return uint64_t{l->bits} / 8;
    case Layout::Channels::NotModelled:
        break;
    }
    return std::nullopt;
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
