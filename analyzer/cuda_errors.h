// Names for the result codes the recorder stores. Runtime (cuda*) and driver (cu*) APIs
// number their errors differently, so the API decides which table applies.
#pragma once

#include <gpumemtrace/trace_format.h>

#include <string>

namespace gmt::analyzer {

bool isRuntimeApi(format::Api api);

// "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", or "cudaError 1234" /
// "CUresult 1234" for codes not in the table.
std::string errorName(format::Api api, int32_t result);

// True for the codes that mean "out of memory" in either numbering.
inline bool isOutOfMemory(int32_t result) {
    return result == 2;
}

} // namespace gmt::analyzer
