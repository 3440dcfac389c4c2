// Error names come from the toolkit's headers at build time: every cudaError_t and
// CUresult has its name, with the value the compiler gives it.
#include "base/cuda_errors.h"

#include <catch2/catch.hpp>

#include <cuda.h>
#include <driver_types.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

using namespace gmt;
using format::Api;

namespace {

// Enumerators in the header's enum block, counted from its text on a line-by-line basis
// (another reading than the generator's, cmake/CudaErrorNames.cmake).
size_t enumerators(const char* header, const std::string& first_line, const std::string& end,
                   const std::regex& entry) {
    std::ifstream in(header);
    REQUIRE(in);
    std::string line;
    bool inside = false;
    size_t n = 0;
    while (std::getline(in, line)) {
        if (!inside) {
            inside = line.find(first_line) != std::string::npos;
            continue;
        }
        if (line.find(end) != std::string::npos) {
            return n;
        }
        n += std::regex_search(line, entry) ? 1 : 0;
    }
    FAIL("enum not found in " << header);
    return 0;
}

} // namespace

TEST_CASE("CUDA error names: known values in both numberings") {
    CHECK(analyzer::errorName(Api::cudaMalloc, 2) == "cudaErrorMemoryAllocation");
    CHECK(analyzer::errorName(Api::cuMemAlloc_v2, 2) == "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(analyzer::errorName(Api::cudaFree, 700) == "cudaErrorIllegalAddress");
    CHECK(analyzer::errorName(Api::cuMemCreate, 801) == "CUDA_ERROR_NOT_SUPPORTED");
    // Codes the hand-kept table never had.
    CHECK(analyzer::errorName(Api::cudaMalloc, 222) == "cudaErrorUnsupportedPtxVersion");
    CHECK(analyzer::errorName(Api::cuMemAlloc_v2, 222) == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
    CHECK(analyzer::errorName(Api::cudaMalloc, 123456) == "cudaError 123456");
    CHECK(analyzer::errorName(Api::cuMemAlloc_v2, -3) == "CUresult -3");
}

TEST_CASE("CUDA error names: every enumerator, with the compiler's value") {
    // tests/cudasim lists every name of both enums; the values are the headers' own.
#define GMT_RUNTIME_CHECK(name, text) CHECK(analyzer::errorName(Api::cudaMalloc, name) == #name);
#include "runtime/runtime_errors.inc"
    CUDASIM_RUNTIME_ERRORS(GMT_RUNTIME_CHECK)
#undef GMT_RUNTIME_CHECK
#define GMT_DRIVER_CHECK(name, text) CHECK(analyzer::errorName(Api::cuMemAlloc_v2, name) == #name);
#include "driver/driver_errors.inc"
    CUDASIM_DRIVER_ERRORS(GMT_DRIVER_CHECK)
#undef GMT_DRIVER_CHECK
}

TEST_CASE("CUDA error names: as many as the headers define") {
    const size_t runtime = enumerators(GMT_CUDA_DRIVER_TYPES_H, "enum __device_builtin__ cudaError",
                                       "};", std::regex(R"(\bcuda(Error\w*|Success)\s*=)"));
    const size_t driver = enumerators(GMT_CUDA_H, "typedef enum cudaError_enum", "} CUresult;",
                                      std::regex(R"(^\s*CUDA_\w+\s*=)"));
    CHECK(runtime > 100);
    CHECK(driver > 80);
    CHECK(analyzer::runtimeErrorNames().size() == runtime);
    CHECK(analyzer::driverErrorNames().size() == driver);
}
