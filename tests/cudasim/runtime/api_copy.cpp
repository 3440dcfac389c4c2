// Runtime API: copies and fills.
//
// Device memory has no contents in the simulator, so these only check that there is a device
// and return success. Host-to-host copies are the exception: both ends are real memory and
// the program may rely on the result.
#include "api_common.h"

#include <cstring>

using namespace cudasim::rt;

namespace {

cudaError_t accept() {
    CUDASIM_WITH_CONTEXT(api);
    (void)api;
    return cudaSuccess;
}

cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    CUDASIM_WITH_CONTEXT(api);
    (void)api;
    if (kind == cudaMemcpyHostToHost && count > 0 && dst != nullptr && src != nullptr) {
        std::memmove(dst, src, count);
    }
    return cudaSuccess;
}

} // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    return copy(dst, src, count, kind);
}
cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
    return copy(dst, src, count, kind);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t) {
    return copy(dst, src, count, kind);
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t) {
    return copy(dst, src, count, kind);
}
cudaError_t cudaMemcpy2D(void*, size_t, const void*, size_t, size_t, size_t, enum cudaMemcpyKind) {
    return accept();
}
cudaError_t cudaMemcpy2D_ptds(void*, size_t, const void*, size_t, size_t, size_t,
                              enum cudaMemcpyKind) {
    return accept();
}
cudaError_t cudaMemcpy2DAsync(void*, size_t, const void*, size_t, size_t, size_t,
                              enum cudaMemcpyKind, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemcpy2DAsync_ptsz(void*, size_t, const void*, size_t, size_t, size_t,
                                   enum cudaMemcpyKind, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms*) {
    return accept();
}
cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms*) {
    return accept();
}
cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms*, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms*, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemcpyPeer(void*, int, const void*, int, size_t) {
    return accept();
}
cudaError_t cudaMemcpyPeerAsync(void*, int, const void*, int, size_t, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemcpyToSymbol(const void*, const void*, size_t, size_t, enum cudaMemcpyKind) {
    return accept();
}
cudaError_t cudaMemcpyToSymbol_ptds(const void*, const void*, size_t, size_t, enum cudaMemcpyKind) {
    return accept();
}
cudaError_t cudaMemcpyFromSymbol(void*, const void*, size_t, size_t, enum cudaMemcpyKind) {
    return accept();
}
cudaError_t cudaMemcpyFromSymbol_ptds(void*, const void*, size_t, size_t, enum cudaMemcpyKind) {
    return accept();
}
cudaError_t cudaMemset(void*, int, size_t) {
    return accept();
}
cudaError_t cudaMemset_ptds(void*, int, size_t) {
    return accept();
}
cudaError_t cudaMemsetAsync(void*, int, size_t, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemsetAsync_ptsz(void*, int, size_t, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemset2D(void*, size_t, int, size_t, size_t) {
    return accept();
}
cudaError_t cudaMemset2D_ptds(void*, size_t, int, size_t, size_t) {
    return accept();
}
cudaError_t cudaMemset2DAsync(void*, size_t, int, size_t, size_t, cudaStream_t) {
    return accept();
}
cudaError_t cudaMemset2DAsync_ptsz(void*, size_t, int, size_t, size_t, cudaStream_t) {
    return accept();
}
