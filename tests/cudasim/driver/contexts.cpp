#include "contexts.h"

#include <algorithm>

namespace cudasim {

void Contexts::init(int devices) {
    for (int d = 0; d < devices; ++d) {
        auto* ctx = new CUctx_st{};
        ctx->device = d;
        ctx->primary = true;
        ctx->id = next_id_++;
        primaries_.push_back(ctx);
        all_.insert(ctx);
    }
}

CUcontext Contexts::create(int device, unsigned flags) {
    auto* ctx = new CUctx_st{};
    ctx->device = device;
    ctx->active = true;
    ctx->flags = flags;
    ctx->id = next_id_++;
    all_.insert(ctx);
    return ctx;
}

std::vector<CUcontext>& Contexts::stack() {
    thread_local std::vector<CUcontext> contexts;
    return contexts;
}

CUresult Contexts::current(CUcontext* out) const {
    auto& contexts = stack();
    if (contexts.empty() || contexts.back() == nullptr) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    CUcontext ctx = contexts.back();
    if (ctx->destroyed || !ctx->active) {
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    }
    *out = ctx;
    return CUDA_SUCCESS;
}

void Contexts::forget_in_this_thread(CUcontext ctx) {
    auto& contexts = stack();
    contexts.erase(std::remove(contexts.begin(), contexts.end(), ctx), contexts.end());
}

} // namespace cudasim
