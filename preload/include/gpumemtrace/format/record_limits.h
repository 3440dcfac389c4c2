// Limits every reader enforces on what a record may hold, so that a damaged or hostile
// trace cannot make it allocate without bound. Their own file because the byte coding
// (string lengths), the record types (stack arrays) and the recorder (what it captures)
// all need them and nothing else of each other.
#pragma once

#include <cstdint>

namespace gmt::format {

inline constexpr uint32_t kMaxRecordSize = 1u << 20;
inline constexpr uint32_t kMaxStackDepth = 256;
// Python frames carried by one stack (innermost kept); see StackInfo::python.
inline constexpr uint32_t kMaxPythonDepth = 128;
// The bytes of a phase's name (PhaseInfo::name): the recorder cuts a longer one
// (gpumemtrace.h says so), a reader refuses it.
inline constexpr uint32_t kMaxPhaseName = 4096;

} // namespace gmt::format
