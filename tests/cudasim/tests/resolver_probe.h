// What the resolver probe (resolver_probe.cpp) saw; read by the program it is preloaded into.
#pragma once

#define CUDASIM_PROBE_MAX_NAMES 256

struct cudasim_probe_report_t {
    // Every dlsym of a name starting with "cu", in order.
    char dlsym[CUDASIM_PROBE_MAX_NAMES][64];
    int dlsym_count;
    // Questions asked to the dlsym'ed cuGetProcAddress_v2, in order.
    char bootstrap[CUDASIM_PROBE_MAX_NAMES][64];
    int bootstrap_count;
    int empty_symbol_result; // the CUresult of the first question
    int empty_symbol_found;  // whether it returned a function
    int resolver_version;    // the cudaVersion "cuGetProcAddress" was asked with
    // Questions asked to the resolver returned for "cuGetProcAddress".
    char resolved[CUDASIM_PROBE_MAX_NAMES][64];
    int resolved_count;
    // Calls that went through the wrappers.
    int mem_alloc_calls;
    int mem_free_calls;
    int alloc_async_calls;
    int free_async_calls;
    int host_alloc_calls;
    int free_host_calls;
    int alloc_managed_calls;
};

extern "C" const cudasim_probe_report_t* cudasim_probe_report();
