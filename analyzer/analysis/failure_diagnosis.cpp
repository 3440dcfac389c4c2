#include "analysis/failure_diagnosis.h"

#include "base/cuda_errors.h"
#include "base/human_bytes.h"

#include <cstdio>

namespace gmt::analyzer {

std::string diagnoseFailure(const format::Event& e, const FailureFacts& f) {
    const std::string req = humanBytes(f.requested);
    if (!isOutOfMemory(e.result)) {
        return "the call failed with " + errorName(e.api, e.result) +
               ", not for lack of memory: check the arguments and the context";
    }
    if (f.device_total != 0 && f.requested > f.device_total) {
        return "more than the device has: " + req + " requested, the device has " +
               humanBytes(f.device_total) + " in total";
    }
    if (f.free_known && f.device_free >= f.requested) {
        return "fragmentation: enough free in total (" + humanBytes(f.device_free) +
               ") but no hole large enough for " + req;
    }
    if (f.free_known && f.device_total != 0) {
        const uint64_t used = f.device_total - std::min(f.device_total, f.device_free);
        if (f.live_bytes * 2 < used) {
            return "the traced program holds little (" + humanBytes(f.live_bytes) + " of " +
                   humanBytes(used) +
                   " in use): memory is used elsewhere (other processes, the CUDA context, "
                   "libraries)";
        }
        return "out of memory: the traced program holds " + humanBytes(f.live_bytes) + " of " +
               humanBytes(f.device_total) + "; only " + humanBytes(f.device_free) +
               " was free for " + req;
    }
    if (f.device_total != 0) {
        return "out of memory: the traced program holds " + humanBytes(f.live_bytes) + " of " +
               humanBytes(f.device_total) + "; " + req +
               " requested (the driver's free figure was not recorded)";
    }
    return "out of memory: " + req + " requested while the traced program held " +
           humanBytes(f.live_bytes);
}

} // namespace gmt::analyzer
