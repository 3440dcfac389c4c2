#include "stack_capture.h"

#include "unwind_cache.h"

#include <gpumemtrace/format/record_limits.h>

#include <link.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <algorithm>

namespace gmt::preload {
namespace {

uintptr_t g_self_start = 0;
uintptr_t g_self_end = 0;

int findSelf(dl_phdr_info* info, size_t, void* data) {
    auto target = reinterpret_cast<uintptr_t>(data);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) {
            continue;
        }
        uintptr_t start = info->dlpi_addr + ph.p_vaddr;
        lo = start < lo ? start : lo;
        hi = start + ph.p_memsz > hi ? start + ph.p_memsz : hi;
    }
    if (target >= lo && target < hi) {
        g_self_start = lo;
        g_self_end = hi;
        return 1;
    }
    return 0;
}

} // namespace

void initStackCapture() {
    dl_iterate_phdr(findSelf, reinterpret_cast<void*>(&initStackCapture));
#if GMT_UNWIND_NONGNU
    // Each thread keeps the unwind rules of the return addresses it has seen.
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
#endif
}

#if GMT_UNWIND_NONGNU

static_assert(kCaptureSites <= unwind::kWindows);

uint32_t captureStack(uint64_t* frames, uint32_t max_depth, uint32_t site, uint64_t hint,
                      unwind::Way* way) {
    // trace() answers max_depth 0 (no frames) and sets `way` on every return (kNone where
    // the frames are left to unw_backtrace below).
    // A few extra frames for the tracer's own, which are dropped.
    constexpr int kOwnFrames = 16;
    const int walked =
        static_cast<int>(std::min<uint32_t>(max_depth, format::kMaxStackDepth)) + kOwnFrames;
    // Mostly answered from the thread's cache of the previous stack (unwind_cache.h), with the
    // same frames unw_backtrace would give.
    unwind::Request req{frames,       max_depth,  static_cast<uint32_t>(walked),
                        g_self_start, g_self_end, 1,
                        site,         hint,       way};
    int cached = unwind::trace(req);
    if (cached >= 0) {
        return static_cast<uint32_t>(cached);
    }
    // Called from here, not from a helper, so it walks the same frames as the cache would.
    void* ips[format::kMaxStackDepth + kOwnFrames];
    int n = unw_backtrace(ips, walked);
    int first = 0;
    while (first < n && reinterpret_cast<uintptr_t>(ips[first]) >= g_self_start &&
           reinterpret_cast<uintptr_t>(ips[first]) < g_self_end) {
        ++first;
    }
    uint32_t depth = 0;
    for (int i = first; i < n && depth < max_depth; ++i) {
        frames[depth++] = reinterpret_cast<uint64_t>(ips[i]) - 1;
    }
    return depth;
}

#else

uint32_t captureStack(uint64_t* frames, uint32_t max_depth, uint32_t, uint64_t, unwind::Way* way) {
    if (way) {
        *way = unwind::Way{};
    }
    if (max_depth == 0) {
        return 0;
    }
    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) {
        return 0;
    }
    uint32_t depth = 0;
    bool in_tracer = true;
    while (depth < max_depth && unw_step(&cursor) > 0) {
        unw_word_t ip = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) {
            break;
        }
        if (in_tracer && ip >= g_self_start && ip < g_self_end) {
            continue;
        }
        in_tracer = false;
        frames[depth++] = static_cast<uint64_t>(ip) - 1;
    }
    return depth;
}

#endif

} // namespace gmt::preload
