// Driver API: streams, events, kernel launches and copies.
//
// Nothing executes on the simulated GPU: work submitted to a stream completes immediately, so
// launches and copies are accepted and do nothing. Synchronization still matters, because
// memory pools release memory above their threshold when the program synchronizes.
#include "api_common.h"

#include <chrono>

using namespace cudasim;

namespace {

CUresult create_stream(CUstream* phStream, unsigned int flags, int priority) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (phStream == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto* stream = new CUstream_st{ctx, ctx->device, flags, priority};
    driver->streams.insert(stream);
    *phStream = stream;
    return CUDA_SUCCESS;
}

CUresult destroy_stream(CUstream hStream) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (!driver->streams.contains(hStream)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    driver->streams.erase(hStream);
    delete hStream;
    return CUDA_SUCCESS;
}

CUresult synchronize_stream(CUstream hStream) {
    Locked driver;
    int device = 0;
    CUDASIM_TRY(driver->stream_device(hStream, &device));
    driver->on_synchronize(device);
    return CUDA_SUCCESS;
}

// Work on a stream: valid context and stream, then nothing to do.
CUresult accept_stream_work(CUstream hStream) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    return driver->is_valid_stream(hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult accept_work() {
    return accept_stream_work(nullptr);
}

CUresult record_event(CUevent hEvent, CUstream hStream) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (!driver->events.contains(hEvent) || !driver->is_valid_stream(hStream)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    hEvent->recorded = true;
    hEvent->when = std::chrono::steady_clock::now();
    return CUDA_SUCCESS;
}

CUresult destroy_event(CUevent hEvent) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (!driver->events.contains(hEvent)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    driver->events.erase(hEvent);
    delete hEvent;
    return CUDA_SUCCESS;
}

CUresult elapsed_time(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (pMilliseconds == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!driver->events.contains(hStart) || !driver->events.contains(hEnd)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (!hStart->recorded || !hEnd->recorded) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    std::chrono::duration<float, std::milli> elapsed = hEnd->when - hStart->when;
    *pMilliseconds = elapsed.count();
    return CUDA_SUCCESS;
}

} // namespace

CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
    return create_stream(phStream, Flags, 0);
}

CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
    return create_stream(phStream, flags, priority);
}

CUresult cuStreamDestroy_v2(CUstream hStream) {
    return destroy_stream(hStream);
}
CUresult cuStreamDestroy(CUstream hStream) {
    return destroy_stream(hStream);
}

CUresult cuStreamSynchronize(CUstream hStream) {
    return synchronize_stream(hStream);
}
CUresult cuStreamSynchronize_ptsz(CUstream hStream) {
    return synchronize_stream(hStream);
}

CUresult cuStreamQuery(CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuStreamQuery_ptsz(CUstream hStream) {
    return accept_stream_work(hStream);
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent /*hEvent*/, unsigned int /*Flags*/) {
    return accept_stream_work(hStream);
}
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent /*hEvent*/, unsigned int /*Flags*/) {
    return accept_stream_work(hStream);
}

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (phEvent == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto* event = new CUevent_st{};
    event->ctx = ctx;
    event->flags = Flags;
    driver->events.insert(event);
    *phEvent = event;
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
    return record_event(hEvent, hStream);
}
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
    return record_event(hEvent, hStream);
}

CUresult cuEventQuery(CUevent hEvent) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    return driver->events.contains(hEvent) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuEventSynchronize(CUevent hEvent) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (!driver->events.contains(hEvent)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    driver->on_synchronize(hEvent->ctx->device);
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent hEvent) {
    return destroy_event(hEvent);
}
CUresult cuEventDestroy(CUevent hEvent) {
    return destroy_event(hEvent);
}

CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
    return elapsed_time(pMilliseconds, hStart, hEnd);
}
CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
    return elapsed_time(pMilliseconds, hStart, hEnd);
}

CUresult cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                        unsigned int, unsigned int, unsigned int, CUstream hStream, void**,
                        void**) {
    return accept_stream_work(hStream);
}
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, unsigned int, CUstream hStream, void**,
                             void**) {
    return accept_stream_work(hStream);
}

// Copies and fills: device memory has no contents in the simulator.
CUresult cuMemcpy(CUdeviceptr, CUdeviceptr, size_t) {
    return accept_work();
}
CUresult cuMemcpy_ptds(CUdeviceptr, CUdeviceptr, size_t) {
    return accept_work();
}
CUresult cuMemcpyAsync(CUdeviceptr, CUdeviceptr, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemcpyAsync_ptsz(CUdeviceptr, CUdeviceptr, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void*, size_t) {
    return accept_work();
}
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr, const void*, size_t) {
    return accept_work();
}
CUresult cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t) {
    return accept_work();
}
CUresult cuMemcpyDtoH_v2_ptds(void*, CUdeviceptr, size_t) {
    return accept_work();
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, size_t) {
    return accept_work();
}
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr, CUdeviceptr, size_t) {
    return accept_work();
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void*, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr, const void*, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemcpyDtoHAsync_v2(void*, CUdeviceptr, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemcpyDtoHAsync_v2_ptsz(void*, CUdeviceptr, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t) {
    return accept_work();
}
CUresult cuMemsetD8_v2_ptds(CUdeviceptr, unsigned char, size_t) {
    return accept_work();
}
CUresult cuMemsetD32_v2(CUdeviceptr, unsigned int, size_t) {
    return accept_work();
}
CUresult cuMemsetD32_v2_ptds(CUdeviceptr, unsigned int, size_t) {
    return accept_work();
}
CUresult cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemsetD8Async_ptsz(CUdeviceptr, unsigned char, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemsetD32Async(CUdeviceptr, unsigned int, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
CUresult cuMemsetD32Async_ptsz(CUdeviceptr, unsigned int, size_t, CUstream hStream) {
    return accept_stream_work(hStream);
}
