// What every exported driver function starts with.
#pragma once

#include "driver_state.h"

#include <cstdint>
#include <mutex>

namespace cudasim {

// Holds the driver lock for the duration of one API call.
class Locked {
  public:
    Locked() : driver_(Driver::instance()), lock_(driver_.mutex) {}
    Driver* operator->() { return &driver_; }
    Driver& operator*() { return driver_; }

  private:
    Driver& driver_;
    std::lock_guard<std::mutex> lock_;
};

inline uint64_t address_of(const void* ptr) {
    return reinterpret_cast<uint64_t>(ptr);
}

// Status codes flow through early returns: `CUDASIM_TRY(expr);` returns expr's error.
#define CUDASIM_TRY(expr)                                                                          \
    do {                                                                                           \
        CUresult cudasim_result_ = (expr);                                                         \
        if (cudasim_result_ != CUDA_SUCCESS) {                                                     \
            return cudasim_result_;                                                                \
        }                                                                                          \
    } while (0)

// A query about one device: the device is checked before the out-parameter, as the driver
// does; `value(driver)` is the answer.
template <typename T, typename Value>
CUresult answer_device_query(T* out, CUdevice dev, Value&& value) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    if (out == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *out = value(*driver);
    return CUDA_SUCCESS;
}

} // namespace cudasim
