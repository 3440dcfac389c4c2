// Which device and context the runtime works on, per thread.
//
// As in the real runtime: each thread has a current device (0 until cudaSetDevice); the first
// call that needs the GPU retains that device's primary context through the driver
// (cuDevicePrimaryCtxRetain) and makes it current (cuCtxSetCurrent). A context the program made
// current through the driver API is used as is (runtime/driver interoperability).
// cudaDeviceReset destroys the primary context; every thread that had it current retains and
// binds it again on its next call.
#pragma once

#include "cudart_internal.h"
#include "driver_api.h"

namespace cudasim::rt {

// The loaded driver, or the error that loading or initializing it gave.
cudaError_t driver(const DriverApi** api);

// Makes sure the calling thread has a usable current context; also loads the driver.
cudaError_t ensure_context(const DriverApi** api);

// Device management for cudaSetDevice / cudaGetDevice / cudaDeviceReset.
cudaError_t device_count(int* count);
cudaError_t select_device(int device);
cudaError_t current_device(int* device);
cudaError_t reset_device(int device);

} // namespace cudasim::rt
