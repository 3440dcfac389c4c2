#include "check/builtin_suppressions.h"

namespace gmt::cli {

namespace {

struct Entry {
    const char* pattern;
    const char* why;
};

// Module patterns: these libraries allocate device memory only for their own handles and
// plans, never for the program's data (which the program allocates, or a framework's
// allocator, whose stacks have no frame of these libraries), so nothing of the program's
// own is hidden by them. Function patterns name the one place a framework allocates such a
// library's memory for it.
constexpr Entry kEntries[] = {
    {"libcublas.so*",
     "cuBLAS allocates a workspace per handle (and per stream it is used on) when the handle "
     "first runs a routine, and frees it only at cublasDestroy; PyTorch, CuPy and JAX keep "
     "their handles until the process ends"},
    {"libcublasLt.so*",
     "cuBLASLt's handle and its default workspace, made once and kept with the handle"},
    {"libcudnn*.so*",
     "cuDNN's handle and the buffers its engines set up on first use (libcudnn, "
     "libcudnn_ops, libcudnn_engines_*), kept until cudnnDestroy, which frameworks never "
     "call"},
    {"libcufft.so*", "a cuFFT plan allocates its work area when it is made; plan caches (PyTorch's "
                     "torch.backends.cuda.cufft_plan_cache, CuPy's) keep plans until exit"},
    {"libnccl.so*",
     "NCCL's communicator buffers (cudaMalloc or cuMem* VMM memory: channels, proxy and "
     "registration buffers) live as long as the communicator; process groups are often "
     "not destroyed before exit"},
    // PyTorch gives each cuBLAS/cuBLASLt handle and stream a workspace from its own caching
    // allocator (a tensor-level block, frameworks.md), kept in a map it never destroys.
    {"at::cuda::getCurrentCUDABlasHandle",
     "PyTorch's cuBLAS workspace: a block of its caching allocator per handle and stream, kept "
     "in a map PyTorch deliberately never destroys (torch.backends.cuda's cuBLAS workspace)"},
    {"at::cuda::getCUDABlasLtWorkspace",
     "PyTorch's cuBLASLt workspace, likewise one block per handle and stream, never freed"},
    {"at::cuda::*getNewWorkspace*",
     "the function PyTorch's cuBLAS and cuBLASLt workspaces are allocated in, when the two "
     "above are inlined away"},
    {"libcudart.so*",
     "the CUDA runtime's own allocations, made inside libcudart for itself: a program's "
     "cudaMalloc is named after that call and its stack has no libcudart frame, so only "
     "the runtime's internal ones match"},
};

} // namespace

std::vector<Suppression> builtinSuppressions() {
    std::vector<Suppression> out;
    for (const Entry& e : kEntries) {
        Suppression s;
        s.type = Suppression::Type::Leak;
        s.pattern = e.pattern;
        s.origin = "built-in";
        s.why = e.why;
        out.push_back(std::move(s));
    }
    return out;
}

std::string builtinSuppressionsText() {
    std::string out = "# gpumemtrace check's built-in suppressions (--no-builtin-suppressions "
                      "leaves them out)\n";
    for (const Suppression& s : builtinSuppressions()) {
        out += "# " + s.why + "\n" + s.text() + "\n";
    }
    return out;
}

} // namespace gmt::cli
