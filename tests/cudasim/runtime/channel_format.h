// Translation of a runtime channel descriptor into the driver's array format.
#pragma once

#include "cudart_internal.h"

#include <optional>

namespace cudasim::rt {

struct ArrayFormat {
    CUarray_format format;
    unsigned channels;
};

// nullopt for descriptors the simulator does not model (mixed channel widths, normalized or
// compressed kinds): the caller reports cudaErrorInvalidChannelDescriptor.
std::optional<ArrayFormat> array_format(const cudaChannelFormatDesc& desc);

} // namespace cudasim::rt
