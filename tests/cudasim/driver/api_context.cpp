// Driver API: primary contexts, created contexts and the per-thread context stack.
#include "api_common.h"
#include "constants.h"

using namespace cudasim;

namespace {

CUresult check_live(Driver& driver, CUcontext ctx) {
    if (ctx == nullptr || !driver.contexts.is_known(ctx)) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    return ctx->destroyed ? CUDA_ERROR_CONTEXT_IS_DESTROYED : CUDA_SUCCESS;
}

CUresult create_context(CUcontext* pctx, unsigned flags, CUdevice dev) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    if (pctx == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUcontext ctx = driver->contexts.create(dev, flags);
    Contexts::stack().push_back(ctx);
    *pctx = ctx;
    return CUDA_SUCCESS;
}

CUresult synchronize(CUcontext ctx) {
    Locked driver;
    if (ctx == nullptr) {
        CUDASIM_TRY(driver->current_context(&ctx));
    } else {
        CUDASIM_TRY(check_live(*driver, ctx));
    }
    driver->on_synchronize(ctx->device);
    return CUDA_SUCCESS;
}

} // namespace

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    if (pctx == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUcontext ctx = driver->contexts.primary(dev);
    ctx->active = true;
    ++ctx->retains;
    *pctx = ctx;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    CUcontext ctx = driver->contexts.primary(dev);
    if (ctx->retains == 0) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    // The last release destroys the primary context and everything allocated in it.
    if (--ctx->retains == 0) {
        driver->teardown(ctx);
        ctx->active = false;
    }
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    CUcontext ctx = driver->contexts.primary(dev);
    driver->teardown(ctx);
    // Retains survive a reset, but the context is gone until the next cuDevicePrimaryCtxRetain
    // (measured on an H200: CUDA_ERROR_CONTEXT_IS_DESTROYED in between).
    ctx->active = false;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
    return cuDevicePrimaryCtxReset_v2(dev);
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    if (flags == nullptr || active == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUcontext ctx = driver->contexts.primary(dev);
    *flags = ctx->flags;
    *active = ctx->active ? 1 : 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    driver->contexts.primary(dev)->flags = flags;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

CUresult cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
    return create_context(pctx, flags, dev);
}

CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
    return create_context(pctx, flags, dev);
}

CUresult cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* /*paramsArray*/, int /*numParams*/,
                        unsigned int flags, CUdevice dev) {
    return create_context(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* /*ctxCreateParams*/, unsigned int flags,
                        CUdevice dev) {
    return create_context(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (ctx == nullptr || !driver->contexts.is_known(ctx) || ctx->destroyed || ctx->primary) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    driver->teardown(ctx);
    ctx->destroyed = true;
    ctx->active = false;
    Contexts::forget_in_this_thread(ctx);
    return CUDA_SUCCESS;
}

CUresult cuCtxDestroy(CUcontext ctx) {
    return cuCtxDestroy_v2(ctx);
}

CUresult cuCtxGetCurrent(CUcontext* pctx) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (pctx == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto& stack = Contexts::stack();
    *pctx = stack.empty() ? nullptr : stack.back();
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    auto& stack = Contexts::stack();
    if (ctx == nullptr) {
        if (!stack.empty()) {
            stack.pop_back();
        }
        return CUDA_SUCCESS;
    }
    CUDASIM_TRY(check_live(*driver, ctx));
    if (stack.empty()) {
        stack.push_back(ctx);
    } else {
        stack.back() = ctx;
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (ctx == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUDASIM_TRY(check_live(*driver, ctx));
    Contexts::stack().push_back(ctx);
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext ctx) {
    return cuCtxPushCurrent_v2(ctx);
}

CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    auto& stack = Contexts::stack();
    if (stack.empty()) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (pctx != nullptr) {
        *pctx = stack.back();
    }
    stack.pop_back();
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext* pctx) {
    return cuCtxPopCurrent_v2(pctx);
}

CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
    Locked driver;
    if (device == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (ctx == nullptr) {
        CUDASIM_TRY(driver->current_context(&ctx));
    } else {
        CUDASIM_TRY(check_live(*driver, ctx));
    }
    *device = ctx->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) {
    return cuCtxGetDevice_v2(device, nullptr);
}

CUresult cuCtxGetFlags(unsigned int* flags) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (flags == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *flags = ctx->flags;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
    Locked driver;
    if (ctx == nullptr) {
        CUDASIM_TRY(driver->current_context(&ctx));
    } else {
        CUDASIM_TRY(check_live(*driver, ctx));
    }
    if (version == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *version = 3020; // what contexts created through the current API report
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() {
    return synchronize(nullptr);
}

CUresult cuCtxSynchronize_v2(CUcontext ctx) {
    return synchronize(ctx);
}
