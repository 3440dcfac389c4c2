// The recorder's settings: every GPUMEMTRACE_* environment variable libgpumemtrace.so reads,
// listed once with its name, type, default and meaning. One table, so that the places that
// name them cannot drift apart: the recorder parses them from it (preload/config.cpp),
// `gpumemtrace record` sets them by its names (analyzer/cli/record_command.cpp), and
// tests/recorder/settings_test.cpp checks that docs/configuration.md documents exactly
// these, each with its default. Plain constants only: the recorder reads them while the
// process is still loading.
#pragma once

namespace gmt::settings {

// How the recorder reads a value. One it cannot read is replaced by the default (the
// traced program never stops because of the tracer's configuration).
enum class Type {
    Text,   // taken as it is
    Switch, // 0, false, no, off, or 1, true, yes, on
    Count,  // a decimal number in the range the meaning gives
    Size,   // bytes, or K/M/G (gpumemtrace/byte_size.h)
    Choice, // one of the words the meaning lists
};

struct Setting {
    const char* name; // the environment variable
    Type type;
    const char* default_value; // as it would be written in the environment
    const char* meaning;       // one line; docs/configuration.md says more
};

// X(id, name, type, default, meaning), in the order the recorder reads them.
#define GMT_RECORDER_SETTINGS(X)                                                                   \
    X(kLogLevel, "GPUMEMTRACE_LOG_LEVEL", Choice, "warn",                                          \
      "the recorder's messages on stderr: trace, debug, info, warn, error, critical or off")       \
    X(kEnable, "GPUMEMTRACE_ENABLE", Switch, "1",                                                  \
      "0 passes every call through untouched and writes no trace; 1 traces")                       \
    X(kStart, "GPUMEMTRACE_START", Choice, "running",                                              \
      "running records from the first call; paused creates the trace but records nothing until "   \
      "gpumemtrace control PID resume")                                                            \
    X(kOutput, "GPUMEMTRACE_OUTPUT", Text, "gpumemtrace.%p.gmtrace",                               \
      "trace path template: %p pid, %r rank, %h host, %t start time, %q{VAR}, %% a percent sign")  \
    X(kStackDepth, "GPUMEMTRACE_STACK_DEPTH", Count, "64",                                         \
      "native frames captured per event, 0 to 256 (0: no stacks)")                                 \
    X(kPython, "GPUMEMTRACE_PYTHON", Switch, "1",                                                  \
      "0 (false, no, off) leaves CPython's frames out of the stacks; 1 (true, yes, on) keeps "     \
      "them")                                                                                      \
    X(kCachingAllocator, "GPUMEMTRACE_CACHING_ALLOCATOR", Switch, "1",                             \
      "0 (false, no, off) leaves out the block events of PyTorch's caching allocator; 1 (true, "   \
      "yes, on) records them")                                                                     \
    X(kBufferSize, "GPUMEMTRACE_BUFFER_SIZE", Size, "1M",                                          \
      "size of the event ring in the trace file: bytes, K, M or G, at most 256M (more is "         \
      "clamped to it)")                                                                            \
    X(kOnFull, "GPUMEMTRACE_ON_FULL", Choice, "block",                                             \
      "a thread that finds the ring full: block (drain it or wait) or drop (count the loss)")      \
    X(kMode, "GPUMEMTRACE_MODE", Choice, "full",                                                   \
      "full (every event in the trace) or aggregate (leaks, peak, growth and failures exact in "   \
      "a trace of bounded size; docs/configuration.md says what it gives up)")                     \
    X(kAggregateBudget, "GPUMEMTRACE_AGGREGATE_BUDGET", Size, "64M",                               \
      "aggregate mode: bytes of the two checkpoint regions together, 128K to 4G (clamped)")        \
    X(kFailureFile, "GPUMEMTRACE_FAILURE_FILE", Text, "",                                          \
      "a file to which a process that cannot create its trace appends one line saying why "        \
      "(gpumemtrace record reads it)")

// The largest event ring GPUMEMTRACE_BUFFER_SIZE (and `record --buffer-size`) may ask for: the
// ring is allocated in the trace file of every traced process, in full, when it is created.
// (kBufferSize's meaning and docs/configuration.md say 256M.)
inline constexpr unsigned long long kMaxBufferBytes = 256ull << 20;
// The range of GPUMEMTRACE_AGGREGATE_BUDGET (kAggregateBudget's meaning says it too).
inline constexpr unsigned long long kMinAggregateBudget = 128ull << 10;
inline constexpr unsigned long long kMaxAggregateBudget = 4ull << 30;

#define GMT_SETTING_CONSTANT(id, name, type, default_value, meaning)                               \
    inline constexpr Setting id{name, Type::type, default_value, meaning};
GMT_RECORDER_SETTINGS(GMT_SETTING_CONSTANT)
#undef GMT_SETTING_CONSTANT

#define GMT_SETTING_ENTRY(id, name, type, default_value, meaning) &id,
inline constexpr const Setting* kRecorderSettings[] = {GMT_RECORDER_SETTINGS(GMT_SETTING_ENTRY)};
#undef GMT_SETTING_ENTRY

} // namespace gmt::settings
