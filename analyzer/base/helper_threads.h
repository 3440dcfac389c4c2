// Starting helper threads that only speed work up: where the system gives fewer (out of
// memory, or its limit on threads), the caller does their share itself, so a failure to
// start one is never an error. Each helper must keep what it throws to itself (an
// exception that leaves a thread ends the process).
#pragma once

#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace gmt::analyzer {

// Adds threads running `body` to `threads` until it holds `count`, or until one cannot be
// started; returns how many it holds. Never throws.
template <typename F>
size_t startHelperThreads(std::vector<std::thread>& threads, size_t count, const F& body) {
    try {
        threads.reserve(count);
        while (threads.size() < count) {
            threads.emplace_back(body);
        }
    } catch (const std::exception&) {
        // std::bad_alloc, or std::system_error from the thread's creation: fewer helpers.
    }
    return threads.size();
}

} // namespace gmt::analyzer
