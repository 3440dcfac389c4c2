#include "process_info.h"

#include "clock.h"
#include "rank_info.h"
#include "real_functions.h"

#include <algorithm>
#include <climits>
#include <fcntl.h>
#include <unistd.h>

#ifndef GPUMEMTRACE_VERSION
#define GPUMEMTRACE_VERSION "unknown"
#endif

namespace gmt::preload {
namespace {

struct CommandLine {
    std::string text;   // argv joined by spaces, at most format::kMaxHeaderCommand bytes
    uint64_t bytes = 0; // the whole line's length
};

// Where `text` may be cut at `limit` bytes without splitting a UTF-8 character.
size_t characterBoundary(const std::string& text, size_t limit) {
    size_t cut = std::min(limit, text.size());
    while (cut > 0 && cut < text.size() && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) {
        --cut;
    }
    return cut;
}

// The whole of /proc/self/cmdline is read (its length goes into the header), but only its
// first bytes are kept.
CommandLine readCommandLine() {
    CommandLine out;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return out;
    }
    char buf[4096];
    ssize_t n;
    uint64_t trailing_nuls = 0; // argv ends in NUL: not part of the line
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        const size_t got = static_cast<size_t>(n);
        // One byte more than is kept, to see whether a character goes on past the cut.
        const size_t room = format::kMaxHeaderCommand + 1 -
                            std::min<size_t>(out.text.size(), format::kMaxHeaderCommand + 1);
        out.text.append(buf, std::min(got, room));
        out.bytes += got;
        for (size_t i = 0; i < got; ++i) {
            trailing_nuls = buf[i] == '\0' ? trailing_nuls + 1 : 0;
        }
    }
    close(fd);
    out.bytes -= std::min(out.bytes, trailing_nuls);
    out.text.resize(std::min<uint64_t>(out.text.size(), out.bytes));
    if (out.text.size() > format::kMaxHeaderCommand) {
        out.text.resize(characterBoundary(out.text, format::kMaxHeaderCommand));
    }
    for (char& c : out.text) {
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
    CommandLine command = readCommandLine();
    h.command = std::move(command.text);
    h.command_bytes = command.bytes;
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
