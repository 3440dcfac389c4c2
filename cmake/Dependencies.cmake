# Every third-party dependency comes from a Debian package. A missing one stops
# configuration with the name of the package to install, so a new user is never left
# decoding a CMake error.

include(FindPkgConfig)

function(gmt_missing what package)
    message(FATAL_ERROR "gpumemtrace: ${what} not found. Install it with:\n"
                        "    sudo apt-get install ${package}\n"
                        "(or run scripts/test.sh, which installs every dependency)")
endfunction()

find_package(Threads REQUIRED)
find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
    gmt_missing("pkg-config" "pkg-config")
endif()

include(Libunwind)

# spdlog and fmt are used header-only so nothing of them is a runtime dependency.
find_package(spdlog QUIET CONFIG)
if(NOT spdlog_FOUND)
    gmt_missing("spdlog" "libspdlog-dev")
endif()
find_package(fmt QUIET CONFIG)
if(NOT fmt_FOUND)
    gmt_missing("fmt" "libfmt-dev")
endif()

find_package(nlohmann_json 3 QUIET CONFIG)
if(NOT nlohmann_json_FOUND)
    gmt_missing("nlohmann/json" "nlohmann-json3-dev")
endif()

# UTF-8 checking of the strings a trace carries (they may be any bytes).
find_package(utf8cpp QUIET CONFIG)
if(NOT utf8cpp_FOUND)
    gmt_missing("utfcpp" "libutfcpp-dev")
endif()

find_package(CLI11 QUIET CONFIG)
if(NOT CLI11_FOUND)
    gmt_missing("CLI11" "libcli11-dev")
endif()

pkg_check_modules(LIBDW QUIET IMPORTED_TARGET libdw)
if(NOT LIBDW_FOUND)
    gmt_missing("elfutils libdw" "libdw-dev")
endif()

if(GPUMEMTRACE_BUILD_TESTS)
    find_package(Catch2 2 QUIET CONFIG)
    if(NOT Catch2_FOUND)
        gmt_missing("Catch2 2.x" "catch2")
    endif()
endif()

if(GPUMEMTRACE_BUILD_BENCHMARKS)
    find_package(benchmark QUIET CONFIG)
    if(NOT benchmark_FOUND)
        gmt_missing("Google Benchmark" "libbenchmark-dev")
    endif()
endif()

# CUDA: only the headers (and the real libcudart for link tests). nvcc is optional.
find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
    message(FATAL_ERROR "gpumemtrace: the CUDA toolkit headers were not found. Install the "
                        "CUDA toolkit (e.g. /usr/local/cuda) or set CUDAToolkit_ROOT.")
endif()
find_program(GMT_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
if(GMT_NVCC)
    message(STATUS "gpumemtrace: nvcc found at ${GMT_NVCC}; CUDA samples will be built")
else()
    message(STATUS "gpumemtrace: nvcc not found; CUDA samples and nvcc tests are skipped")
endif()
