// Driver API: error names and descriptions.
#include "cuda_internal.h"

namespace {

#include "driver_errors.inc"

struct ErrorText {
    CUresult code;
    const char* name;
    const char* description;
};

#define CUDASIM_ERROR_ENTRY(code, description) ErrorText{code, #code, description},
constexpr ErrorText kErrors[] = {CUDASIM_DRIVER_ERRORS(CUDASIM_ERROR_ENTRY)};
#undef CUDASIM_ERROR_ENTRY

const ErrorText* find(CUresult code) {
    for (const ErrorText& error : kErrors) {
        if (error.code == code) {
            return &error;
        }
    }
    return nullptr;
}

} // namespace

// Usable before cuInit, as in the real driver: programs report init failures with it.
CUresult cuGetErrorName(CUresult error, const char** pStr) {
    if (pStr == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const ErrorText* text = find(error);
    *pStr = text != nullptr ? text->name : nullptr;
    return text != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
    if (pStr == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const ErrorText* text = find(error);
    *pStr = text != nullptr ? text->description : nullptr;
    return text != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
