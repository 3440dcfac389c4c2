// How many bytes an array descriptor stands for.
//
// The simulator charges arrays exactly width x height x depth x element size (summed over the
// levels of a mipmapped array), so that a tracer computing bytes from the same descriptor
// agrees with cuMemGetInfo up to granule rounding.
#pragma once

#include "cuda_internal.h"

#include <cstdint>
#include <optional>

namespace cudasim {

// Bytes of one element (all channels), worked out from the bits cuda.h's comment on the
// format gives each channel, on purpose not from a table of byte sizes like the recorder's
// (preload/hooks/array_sizes.cpp), which tests/recorder/array_sizes_test.cpp checks against
// this one. nullopt for formats the simulator does not model (block-compressed and YUV
// formats) or a channel count the format does not allow.
std::optional<uint64_t> element_bytes(CUarray_format format, unsigned channels);

// Whether the simulator knows the format at all: sized, or one it declines on purpose. False
// only for a format newer than the cuda.h this was written against.
bool format_known(CUarray_format format);

// nullopt for an invalid descriptor (zero width, unsupported format, bad cubemap depth).
std::optional<uint64_t> array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& descriptor);
std::optional<uint64_t> mipmapped_array_bytes(const CUDA_ARRAY3D_DESCRIPTOR& descriptor,
                                              unsigned levels);

} // namespace cudasim
