// What cuDeviceGetAttribute reports for the simulated GPU.
#pragma once

#include "cuda_internal.h"

namespace cudasim {

// The value an H200 (SXM, 132 SMs) reports for `attribute` on device `ordinal`; attributes the
// simulator does not model read as 0, as unsupported features do on real hardware.
int device_attribute(CUdevice_attribute attribute, int ordinal);

} // namespace cudasim
