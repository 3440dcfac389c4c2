// An inference server on the stand-in libc10_cuda.so (tests/frameworks/fake_c10_cuda.cpp),
// for the aggregated mode's folding of block events (preload/aggregator.h): model weights
// loaded once, then requests, each a phase, whose tensors come and go through the caching
// allocator; every tenth request keeps a small answer (growth, leaks at exit); one request
// in the middle needs a large transient tensor (the tensor peak, whose holders an
// aggregated trace must keep); every 500th request empties the cache (segments given back)
// and every 7th frees a tensor used on a side stream (its free completes later).
//
//     block_server REQUESTS RESULT.json [kill | steady | held | held_slow]
//
// Loads the library as Python loads PyTorch's (dlopen, RTLD_LOCAL) from $FAKE_TORCH/lib.
// RESULT gets the allocator's statistics at the end (PyTorch's memory_stats names). With
// `kill`, the process kills itself with SIGKILL after the requests (no trailer, no final
// checkpoint), after writing RESULT. With `steady`, no phase marks and no kept answers: a
// server whose live set stays the same however long it runs. With `held`, each request's
// output tensor is freed in the next request, after its mark (live at every mark, as a
// server's answer still being sent); `held_slow` keeps an answer every 1000th request
// instead of every tenth (a slow leak).
#include <dlfcn.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using InitFn = void (*)();
using MallocFn = void* (*)(size_t, void*);
using FreeFn = void (*)(void*);
using RecordStreamFn = void (*)(void*, void*);
using EmptyCacheFn = void (*)();
using StatsFn = void (*)(uint64_t*);
using PhaseFn = void (*)(const char*);

template <typename T> T symbol(void* lib, const char* name) {
    void* s = dlsym(lib, name);
    if (!s) {
        std::fprintf(stderr, "block_server: %s not found\n", name);
        std::exit(2);
    }
    return reinterpret_cast<T>(s);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: block_server REQUESTS RESULT.json [kill]\n");
        return 2;
    }
    const long requests = std::atol(argv[1]);
    const std::string mode = argc > 3 ? argv[3] : "";
    const bool kill = mode == "kill", steady = mode == "steady";
    const bool held = mode == "held" || mode == "held_slow";
    const long keep_every = mode == "held_slow" ? 1000 : 10;
    const char* root = std::getenv("FAKE_TORCH");
    if (!root) {
        std::fprintf(stderr, "block_server: FAKE_TORCH not set\n");
        return 2;
    }
    void* lib = dlopen((std::string(root) + "/lib/libc10_cuda.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "block_server: %s\n", dlerror());
        return 2;
    }
    auto init = symbol<InitFn>(lib, "fake_torch_init");
    auto malloc = symbol<MallocFn>(lib, "fake_torch_malloc");
    auto free = symbol<FreeFn>(lib, "fake_torch_free");
    auto record_stream = symbol<RecordStreamFn>(lib, "fake_torch_record_stream");
    auto empty_cache = symbol<EmptyCacheFn>(lib, "fake_torch_empty_cache");
    auto stats = symbol<StatsFn>(lib, "fake_torch_stats");
    // The recorder's phase marks, when it is preloaded.
    auto phase =
        steady ? nullptr : reinterpret_cast<PhaseFn>(dlsym(RTLD_DEFAULT, "gpumemtrace_mark_phase"));

    init();
    auto tensor = [&](size_t bytes) {
        void* p = malloc(bytes, nullptr);
        if (!p) {
            std::fprintf(stderr, "block_server: out of memory for %zu bytes\n", bytes);
            std::exit(3);
        }
        return p;
    };
    std::vector<void*> model;
    for (size_t bytes : {12u << 20, 3'000'001u, 700'001u, 65'536u}) {
        model.push_back(tensor(bytes));
    }
    std::vector<void*> answers;
    void* const side_stream = reinterpret_cast<void*>(0x5a5a);
    void* previous_out = nullptr; // `held`: the last request's output
    for (long r = 0; r < requests; ++r) {
        if (phase) {
            phase("request");
        }
        const size_t vary = static_cast<size_t>(r % 13) * 4096;
        void* input = tensor(200'000 + vary);
        void* hidden = tensor(1'500'000 + vary);
        void* scratch = tensor(4'000 + vary / 8);
        void* out = tensor(6'000'001);
        free(hidden);
        void* attn = tensor(r == requests / 2 ? (64u << 20) : 900'000 + vary);
        if (r % 7 == 3) {
            record_stream(scratch, side_stream); // completes at a later allocation
        }
        free(scratch);
        free(attn);
        free(input);
        if (!steady && r % keep_every == 9) {
            answers.push_back(tensor(65'536 + static_cast<size_t>(r % 3) * 512));
        }
        if (held) {
            if (previous_out) {
                free(previous_out);
            }
            previous_out = out;
        } else {
            free(out);
        }
        if (r % 500 == 499) {
            empty_cache();
        }
    }
    if (previous_out) {
        free(previous_out);
    }
    uint64_t s[9] = {};
    stats(s);
    FILE* f = std::fopen(argv[2], "w");
    if (!f) {
        return 2;
    }
    std::fprintf(f,
                 "{\"allocated\": %llu, \"reserved\": %llu, \"max_allocated\": %llu, "
                 "\"max_reserved\": %llu, \"answers\": %zu}\n",
                 static_cast<unsigned long long>(s[0]), static_cast<unsigned long long>(s[1]),
                 static_cast<unsigned long long>(s[4]), static_cast<unsigned long long>(s[5]),
                 answers.size());
    std::fclose(f);
    if (kill) {
        std::raise(SIGKILL);
    }
    return 0; // model and answers still allocated: the caching allocator's blocks at exit
}
