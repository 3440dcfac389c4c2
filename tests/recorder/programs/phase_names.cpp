// Phase marks and NVTX ranges named while the recorder may be short of host memory, for
// tests/recorder/names_oom_tests.cpp: the names reach the recorder on the program's own
// thread, in the stretch where a preloaded shim (fail_thread_allocations.cpp, with
// GMT_TEST_FAIL_THREAD=asking) fails that thread's allocations.
//
//   phase_names N   a first round of every call, outside the stretch (NVTX loads its tool
//                   on its first call), then N rounds inside it, each: a phase mark with a
//                   long name; ranges pushed and popped by an ASCII name, a wide one, an
//                   attribute's wide message and a string registered that round; prints
//                   "rounds N"
//
// Nothing in a round allocates of its own: names are built in buffers on the stack, so that
// every allocation in the stretch is the recorder's.
#define GPUMEMTRACE_WEAK_API
#include <gpumemtrace.h>

#include <nvtx3/nvToolsExt.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <dlfcn.h>

namespace {

// `prefix` then the decimal `n`, into `out` (room for both is the caller's).
template <typename Char> void numbered(Char* out, const Char* prefix, int n) {
    size_t at = 0;
    while (prefix[at]) {
        out[at] = prefix[at];
        ++at;
    }
    char digits[12];
    const int count = std::snprintf(digits, sizeof digits, "%d", n);
    for (int i = 0; i < count; ++i) {
        out[at++] = static_cast<Char>(digits[i]);
    }
    out[at] = 0;
}

void round(int n) {
    char name[128];
    numbered(name, "a phase named at more length than a string keeps inline, round ", n);
    if (gpumemtrace_mark_phase) {
        gpumemtrace_mark_phase(name);
    }
    numbered(name, "an ASCII range named at length, round ", n);
    nvtxRangePushA(name);
    nvtxRangePop();
    wchar_t wide[128];
    numbered(wide, L"a wide range, \u00e9t\u00e9 \u6771\u4eac \U0001F680, round ", n);
    nvtxRangePushW(wide);
    nvtxRangePop();
    nvtxEventAttributes_t attributes = {};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    attributes.message.unicode = wide;
    nvtxRangePushEx(&attributes);
    nvtxRangePop();
    numbered(name, "a registered string, round ", n);
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = nvtxDomainRegisterStringA(nullptr, name);
    nvtxDomainRangePushEx(nullptr, &attributes);
    nvtxDomainRangePop(nullptr);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: phase_names ROUNDS\n");
        return 2;
    }
    const int rounds = std::atoi(argv[1]);
    // A CUDA call first: the recorder's trace and this thread's state exist before the
    // stretch.
    void* p = nullptr;
    if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess) {
        std::fprintf(stderr, "phase_names: cudaMalloc failed\n");
        return 10;
    }
    auto fail = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "gmt_test_fail_allocations"));
    round(0);
    if (fail) {
        fail(1);
    }
    for (int n = 1; n <= rounds; ++n) {
        round(n);
    }
    if (fail) {
        fail(0);
    }
    std::printf("rounds %d\n", rounds);
    return 0;
}
