#include "channel_format.h"

namespace cudasim::rt {

std::optional<ArrayFormat> array_format(const cudaChannelFormatDesc& desc) {
    const int bits[] = {desc.x, desc.y, desc.z, desc.w};
    unsigned channels = 0;
    for (int b : bits) {
        if (b == 0) {
            break;
        }
        if (b != desc.x) {
            return std::nullopt;
        }
        ++channels;
    }
    if (channels == 0 || channels == 3) {
        return std::nullopt;
    }
    switch (desc.f) {
    case cudaChannelFormatKindSigned:
        if (desc.x == 8) {
            return ArrayFormat{CU_AD_FORMAT_SIGNED_INT8, channels};
        }
        if (desc.x == 16) {
            return ArrayFormat{CU_AD_FORMAT_SIGNED_INT16, channels};
        }
        if (desc.x == 32) {
            return ArrayFormat{CU_AD_FORMAT_SIGNED_INT32, channels};
        }
        return std::nullopt;
    case cudaChannelFormatKindUnsigned:
        if (desc.x == 8) {
            return ArrayFormat{CU_AD_FORMAT_UNSIGNED_INT8, channels};
        }
        if (desc.x == 16) {
            return ArrayFormat{CU_AD_FORMAT_UNSIGNED_INT16, channels};
        }
        if (desc.x == 32) {
            return ArrayFormat{CU_AD_FORMAT_UNSIGNED_INT32, channels};
        }
        return std::nullopt;
    case cudaChannelFormatKindFloat:
        if (desc.x == 16) {
            return ArrayFormat{CU_AD_FORMAT_HALF, channels};
        }
        if (desc.x == 32) {
            return ArrayFormat{CU_AD_FORMAT_FLOAT, channels};
        }
        return std::nullopt;
    default:
        return std::nullopt;
    }
}

} // namespace cudasim::rt
