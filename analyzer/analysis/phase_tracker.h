// Phases of one process: what a program marks with gpumemtrace_mark_phase(),
// gpumemtrace_push_phase()/gpumemtrace_pop_phase() (include/gpumemtrace.h) or NVTX ranges
// (preload/hooks/nvtx_injection.cpp).
//
// A mark starts a phase that runs to the next mark at the same level, or to the end of
// what encloses it. A push starts a phase nested in the pushing thread's innermost open
// phase; its pop ends it (and whatever was marked inside it), and what was current before
// the push is current again. So phases form a tree: a phase is a (parent, name) pair, and
// "step" inside "test_a" is another phase than "step" inside "test_b". The current phase
// of the process is the innermost open phase of the thread that marked, pushed or popped
// last (a process-wide approximation for programs whose threads mark independently).
//
// Figures are kept per phase over every time it was entered, so a loop that marks "step" a
// million times costs one entry; past `max_names` distinct phases the rest share one
// top-level entry, kOtherPhases, except the phases named `kept` and those nested in them:
// the phase a report or check is scoped to keeps its own figures however many phases came
// before it (a pytest run pushes one phase per test).
#pragma once

#include <gpumemtrace/format/records.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

inline constexpr uint32_t kNoPhase = UINT32_MAX;
inline constexpr const char* kOtherPhases = "(other phases)";

struct PhaseStats {
    std::string name;
    uint32_t parent = kNoPhase; // the phase it is nested in
    uint32_t depth = 0;         // ancestors: 0 for a top-level phase
    uint64_t occurrences = 0;   // times marked or pushed (a pop returning to it is none)
    uint64_t first_time_ns = 0;
    uint64_t last_time_ns = 0; // when it was last entered
    uint64_t duration_ns = 0;  // summed over occurrences, nested phases included
    uint64_t allocations = 0;  // made while it was current (not counting nested phases)
    uint64_t allocated_bytes = 0;
    uint64_t frees = 0;
    // The process's live device memory at most while it was open (nested phases included).
    uint64_t peak_bytes = 0;
    uint64_t peak_time_ns = 0;
    // The most that live device memory rose above its level when an occurrence began: what
    // the phase itself needed, whatever was held before it.
    uint64_t peak_above_start_bytes = 0;
    uint64_t peak_above_start_time_ns = 0; // when it first rose that far
};

class PhaseTracker {
  public:
    explicit PhaseTracker(size_t max_names, std::optional<std::string> kept = std::nullopt)
        : max_names_(max_names), kept_name_(std::move(kept)) {}

    // A Phase record, with the process's live device memory then. Returns the current
    // phase afterwards (kNoPhase: none).
    uint32_t onPhase(const format::PhaseInfo& phase, uint64_t live_bytes);
    // After an event of the process while a phase is current.
    void onEvent(uint64_t time_ns, uint64_t live_bytes, uint64_t allocations,
                 uint64_t allocated_bytes, uint64_t frees);
    // The process ended: every open phase ends too.
    void end(uint64_t time_ns);

    uint32_t current() const { return current_; }
    // The phase the last Phase record began (a mark or a push) or ended (a pop; kNoPhase
    // for a pop with nothing pushed): what the report's list of markers names.
    uint32_t recordPhase() const { return record_phase_; }
    const std::vector<PhaseStats>& phases() const { return phases_; }
    // True when `phase` is `ancestor` or nested (at any depth) in it.
    bool within(uint32_t phase, uint32_t ancestor) const;
    // "a > b > c": the names from the outermost phase down to `phase`.
    std::vector<std::string> path(uint32_t phase) const;

  private:
    // One occurrence of a phase that has begun and not ended.
    struct Open {
        uint32_t phase = kNoPhase;
        uint64_t start_ns = 0;
        uint64_t start_live = 0;
    };
    // A pushed phase and the phase marked inside it (if any); the base level of a
    // process has no pushed phase.
    struct Level {
        Open pushed;
        Open marked;
    };

    uint32_t intern(uint32_t parent, const std::string& name, uint64_t time_ns);
    Open begin(uint32_t phase, uint64_t time_ns, uint64_t live_bytes);
    void close(Open& open, uint64_t time_ns);
    // The innermost open phase of a level stack (the base level when the stack is empty).
    uint32_t innermost(const std::vector<Level>& stack) const;
    void touch(const Open& open, uint64_t time_ns, uint64_t live_bytes);

    size_t max_names_;
    std::optional<std::string> kept_name_;
    std::vector<PhaseStats> phases_;
    std::vector<bool> kept_; // per phase: named kept_name_, or nested in such a phase
    std::unordered_map<std::string, uint32_t> index_; // parent (4 bytes) + name
    Level base_;
    std::unordered_map<uint32_t, std::vector<Level>> threads_; // pushed levels per thread
    uint32_t active_tid_ = 0; // the thread that marked, pushed or popped last
    uint32_t current_ = kNoPhase;
    uint32_t record_phase_ = kNoPhase;
};

} // namespace gmt::analyzer
