// The small driver objects behind opaque handles: streams, events and arrays.
//
// cuda.h only declares these structs; the simulator defines them. Every handle is also kept in
// a registry (Driver), and a handle is looked at only after the registry has vouched for it.
#pragma once

#include "cuda_internal.h"
#include "device_memory.h"

#include <chrono>
#include <cstdint>

struct CUstream_st {
    CUcontext ctx = nullptr;
    int device = 0;
    unsigned flags = 0;
    int priority = 0;
};

struct CUevent_st {
    CUcontext ctx = nullptr;
    unsigned flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point when{};
};

// Arrays occupy device memory (a block in the device's address range, charged to capacity) but
// have no pointer a program could use, so they live outside the pointer registry.
struct CUarray_st {
    CUcontext ctx = nullptr;
    int device = 0;
    uint64_t bytes = 0; // from the descriptor
    cudasim::Block block;
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
};

struct CUmipmappedArray_st {
    CUcontext ctx = nullptr;
    int device = 0;
    uint64_t bytes = 0; // all levels, from the descriptor
    cudasim::Block block;
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    unsigned levels = 0;
};
