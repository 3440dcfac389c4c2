#include "process_info.h"

#include "clock.h"
#include "rank_info.h"
#include "real_functions.h"

#include <climits>
#include <fcntl.h>
#include <unistd.h>

#ifndef GPUMEMTRACE_VERSION
#define GPUMEMTRACE_VERSION "unknown"
#endif

namespace gmt::preload {
namespace {

std::string readCommandLine() {
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return {};
    }
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && out.size() < 64 * 1024) {
        out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    while (!out.empty() && out.back() == '\0') {
        out.pop_back();
    }
    for (char& c : out) {
        if (c == '\0') {
            c = ' ';
        }
    }
    return out;
}

} // namespace

format::HeaderInfo collectHeader(uint32_t stack_depth) {
    format::HeaderInfo h;
    h.pid = static_cast<uint32_t>(getpid());
    h.ppid = static_cast<uint32_t>(getppid());
    h.start_wall_ns = nowNs(CLOCK_REALTIME);
    h.start_mono_ns = nowNs(CLOCK_MONOTONIC);
    h.stack_depth = stack_depth;
    h.command = readCommandLine();
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        h.executable.assign(exe, static_cast<size_t>(n));
    }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    h.host = host;
    h.tracer_version = GPUMEMTRACE_VERSION;
    RankInfo rank = detectRank();
    h.rank = rank.rank;
    h.local_rank = rank.local_rank;
    h.world_size = rank.world_size;
    h.rank_source = rank.source;
    const RealFunctions& cu = driverReal();
    int version = 0;
    if (cu.cuDriverGetVersion && cu.cuDriverGetVersion(&version) == CUDA_SUCCESS) {
        h.driver_version = version;
    }
    return h;
}

std::vector<format::DeviceInfo> collectDevices() {
    std::vector<format::DeviceInfo> out;
    const RealFunctions& cu = driverReal();
    int count = 0;
    if (!cu.cuDeviceGetCount || cu.cuDeviceGetCount(&count) != CUDA_SUCCESS) {
        return out;
    }
    for (int i = 0; i < count; ++i) {
        CUdevice dev;
        if (!cu.cuDeviceGet || cu.cuDeviceGet(&dev, i) != CUDA_SUCCESS) {
            continue;
        }
        format::DeviceInfo d;
        d.ordinal = i;
        char name[256] = {};
        if (cu.cuDeviceGetName && cu.cuDeviceGetName(name, sizeof name - 1, dev) == CUDA_SUCCESS) {
            d.name = name;
        }
        size_t total = 0;
        if (cu.cuDeviceTotalMem_v2 && cu.cuDeviceTotalMem_v2(&total, dev) == CUDA_SUCCESS) {
            d.total_bytes = total;
        }
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        size_t granularity = 0;
        if (cu.cuMemGetAllocationGranularity &&
            cu.cuMemGetAllocationGranularity(&granularity, &prop,
                                             CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS &&
            granularity > 0) {
            d.granularity = granularity;
        }
        out.push_back(std::move(d));
    }
    return out;
}

} // namespace gmt::preload
