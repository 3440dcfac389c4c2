// Out of host memory in the recorder's tables that grow with the traced program: in a
// drain of the ring (the writer thread's, or an application thread's that waits for room),
// an aggregated trace's (aggregator.h) and a test's accounting (phase_accounting.h); on
// every thread, the ids of the stacks (stack_table.h) and of Python's code objects
// (python/code_table.h), the list of loaded modules (module_map.h) and NVTX's registered
// strings (hooks/nvtx_injection.cpp). The recorder is built without exceptions, so a
// std::bad_alloc that left such a table would end the traced program (std::terminate); the
// files that keep them are compiled with exceptions (preload/CMakeLists.txt) and catch it
// at their entry points with this, so that the recorder degrades (says so, keeps less)
// instead.
#pragma once

#if !defined(__cpp_exceptions)
#error "out_of_memory.h is for the recorder's files compiled with -fexceptions"
#endif

#include <new>
#include <stdexcept>

namespace gmt::preload {

// Runs `body`; false when it ran out of memory (std::length_error: a table past what its
// type can address, the same want of room).
template <typename Body> bool withoutThrowing(Body&& body) noexcept {
    try {
        body();
        return true;
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }
    return false;
}

// Gives back the containers' memory. An empty one allocates nothing (libstdc++'s unordered
// containers keep their single empty bucket inline), so this cannot fail.
template <typename... Containers> void giveBack(Containers&... containers) noexcept {
    (Containers().swap(containers), ...);
}

} // namespace gmt::preload
