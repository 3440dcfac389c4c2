// Runtime API: streams and events (no work ever waits on the simulated GPU).
#include "api_common.h"

using namespace cudasim::rt;

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamCreate(pStream, CU_STREAM_DEFAULT));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamCreate(pStream, flags));
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamCreateWithPriority(pStream, flags, priority));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamDestroy(stream));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamSynchronize(stream));
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamSynchronize_ptsz(stream));
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamQuery(stream));
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamQuery_ptsz(stream));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamWaitEvent(stream, event, flags));
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuStreamWaitEvent_ptsz(stream, event, flags));
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventCreate(event, CU_EVENT_DEFAULT));
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventCreate(event, flags));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventRecord(event, stream));
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventRecord_ptsz(event, stream));
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventQuery(event));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventSynchronize(event));
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventDestroy(event));
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuEventElapsedTime(ms, start, end));
}
