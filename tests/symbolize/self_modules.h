// The module map of the running test process, built the way the recorder builds it
// (dl_iterate_phdr, build-id from PT_NOTE), so the tests can symbolize their own code.
#pragma once

#include <gpumemtrace/trace_format.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace gmt::symtest {

std::vector<format::ModuleInfo> selfModules();

// The module of `modules` covering `address`.
std::optional<format::ModuleInfo> moduleContaining(const std::vector<format::ModuleInfo>& modules,
                                                   uint64_t address);

} // namespace gmt::symtest
