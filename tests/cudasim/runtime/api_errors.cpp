// Runtime API: error names, descriptions and the per-thread last error.
#include "api_common.h"

using namespace cudasim::rt;

namespace {

#include "runtime_errors.inc"

struct ErrorText {
    cudaError_t code;
    const char* name;
    const char* description;
};

#define CUDASIM_ERROR_ENTRY(code, description) ErrorText{code, #code, description},
constexpr ErrorText kErrors[] = {CUDASIM_RUNTIME_ERRORS(CUDASIM_ERROR_ENTRY)};
#undef CUDASIM_ERROR_ENTRY

const ErrorText* find(cudaError_t code) {
    for (const ErrorText& error : kErrors) {
        if (error.code == code) {
            return &error;
        }
    }
    return nullptr;
}

} // namespace

// The real runtime answers unknown codes with these strings rather than NULL.
const char* cudaGetErrorName(cudaError_t error) {
    const ErrorText* text = find(error);
    return text != nullptr ? text->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
    const ErrorText* text = find(error);
    return text != nullptr ? text->description : "unknown error";
}

cudaError_t cudaGetLastError() {
    cudaError_t error = last_error();
    last_error() = cudaSuccess;
    return error;
}

cudaError_t cudaPeekAtLastError() {
    return last_error();
}
