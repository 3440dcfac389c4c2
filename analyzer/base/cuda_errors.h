// Names for the result codes the recorder stores. Runtime (cuda*) and driver (cu*) APIs
// number their errors differently, so the API decides which table applies. The tables
// are generated at build time from the CUDA toolkit's headers (cmake/CudaErrorNames.cmake).
#pragma once

#include <gpumemtrace/format/event.h>

#include <cstdint>
#include <span>
#include <string>

namespace gmt::analyzer {

bool isRuntimeApi(format::Api api);

// "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", or "cudaError 1234" /
// "CUresult 1234" for codes the toolkit this was built with does not define.
std::string errorName(format::Api api, int32_t result);

// True for the codes that mean "out of memory" in either numbering.
inline bool isOutOfMemory(int32_t result) {
    return result == 2;
}

struct ErrorNameEntry {
    int32_t code;
    const char* name;
};
// Every cudaError_t / CUresult, in header order.
std::span<const ErrorNameEntry> runtimeErrorNames();
std::span<const ErrorNameEntry> driverErrorNames();

} // namespace gmt::analyzer
