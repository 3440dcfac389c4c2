// Phases of one process: the names a program marks with gpumemtrace_mark_phase()
// (include/gpumemtrace.h). A phase runs from its marker to the process's next marker or
// its end. Figures are kept per name, over every time the name was marked, so a loop
// that marks "step" a million times costs one entry; past `max_names` distinct names the
// rest share one entry, kOtherPhases.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

inline constexpr uint32_t kNoPhase = UINT32_MAX;
inline constexpr const char* kOtherPhases = "(other phases)";

struct PhaseStats {
    std::string name;
    uint64_t occurrences = 0;
    uint64_t first_time_ns = 0;
    uint64_t duration_ns = 0;
    uint64_t allocations = 0;
    uint64_t allocated_bytes = 0;
    uint64_t frees = 0;
    uint64_t peak_bytes = 0; // the process's live device memory while the phase was current
    uint64_t peak_time_ns = 0;
};

class PhaseTracker {
  public:
    explicit PhaseTracker(size_t max_names) : max_names_(max_names) {}

    // A marker: the named phase becomes current; `live_bytes` is held as it starts.
    // Returns its index.
    uint32_t mark(const std::string& name, uint64_t time_ns, uint64_t live_bytes);
    // After an event of the process while a phase is current.
    void onEvent(uint64_t time_ns, uint64_t live_bytes, uint64_t allocations,
                 uint64_t allocated_bytes, uint64_t frees) {
        PhaseStats& s = phases_[current_];
        s.allocations += allocations;
        s.allocated_bytes += allocated_bytes;
        s.frees += frees;
        if (live_bytes > s.peak_bytes) {
            s.peak_bytes = live_bytes;
            s.peak_time_ns = time_ns;
        }
    }
    // The process ended: the current phase ends too.
    void end(uint64_t time_ns);

    uint32_t current() const { return current_; }
    const std::vector<PhaseStats>& phases() const { return phases_; }

  private:
    void close(uint64_t time_ns);

    size_t max_names_;
    std::vector<PhaseStats> phases_;
    std::unordered_map<std::string, uint32_t> index_;
    uint32_t current_ = kNoPhase;
    uint64_t current_start_ = 0;
};

} // namespace gmt::analyzer
