#include "base/cuda_errors.h"

#include "cuda_error_names.inc" // generated: GMT_CUDA_RUNTIME_ERRORS, GMT_CUDA_DRIVER_ERRORS

namespace gmt::analyzer {

namespace {

#define GMT_ERROR_ENTRY(value, name) ErrorNameEntry{value, name},
constexpr ErrorNameEntry kRuntime[] = {GMT_CUDA_RUNTIME_ERRORS(GMT_ERROR_ENTRY)};
constexpr ErrorNameEntry kDriver[] = {GMT_CUDA_DRIVER_ERRORS(GMT_ERROR_ENTRY)};
#undef GMT_ERROR_ENTRY

const char* find(std::span<const ErrorNameEntry> table, int32_t code) {
    for (const ErrorNameEntry& e : table) {
        if (e.code == code) {
            return e.name;
        }
    }
    return nullptr;
}

} // namespace

bool isRuntimeApi(format::Api api) {
    return format::apiName(api).starts_with("cuda");
}

std::span<const ErrorNameEntry> runtimeErrorNames() {
    return kRuntime;
}

std::span<const ErrorNameEntry> driverErrorNames() {
    return kDriver;
}

std::string errorName(format::Api api, int32_t result) {
    const bool runtime = isRuntimeApi(api);
    if (const char* name = find(runtime ? runtimeErrorNames() : driverErrorNames(), result)) {
        return name;
    }
    return (runtime ? "cudaError " : "CUresult ") + std::to_string(result);
}

} // namespace gmt::analyzer
