// The leak policy: what memory still live when a process ended is (docs/analysis.md,
// "Leaks" and "Held by a caching allocator at exit"), decided in one place for a report
// being built from a trace (report_builder.cpp) and for a saved JSON report read back
// (`check` and `diff` given one) alike.
//
// A leak group (one process's allocations of one stack, kind, API and teardown flag still
// live at the end) is
//   held        when its stack matches an entry of the caching allocator table: that
//               allocator's cache (Report::held_at_exit, Summary::held_at_exit_*), never in
//               the leaked figures; a block (kind Block) never is, its segment is;
//   suppressed  when it is leaked and the suppression rules (check/suppressions.h, above
//               this stage, given as LeakPolicy::suppress) match its site: it stays in the
//               summary but leaves the leak scope for its suppressed figures;
//   leaked      otherwise.
// Blocks freed by the interpreter's finalization (the frees marked at exit,
// analysis/caching/block_tracker.cpp) are no leak groups; blocks still allocated in a
// process whose interpreter finalized are kept at exit (keptAtExit): what it left allocated
// was still the program's when the process ended, not lost by it (docs/frameworks.md). The
// report lists both as CachingAllocatorReport::exit_freed and exit_kept; neither a table
// nor a suppression changes them.
//
// The figures a class moves are derived from the groups, never patched: a saved report
// whose figures do not add up with its listed sites is refused (LeakPolicyError).
#pragma once

#include "analysis/caching/caching_allocators.h"
#include "model/report.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gmt::analyzer {

// True when a rule suppresses the leak site (the rules count their own uses).
using LeakFilter = std::function<bool(const LeakSite&)>;

struct LeakPolicy {
    // Null: nothing is held, a cache's memory is leaked (`--count-cached`).
    std::shared_ptr<const CachingAllocatorTable> caching_allocators =
        CachingAllocatorTable::builtin();
    LeakFilter suppress; // null: no suppressions (`report`)
    size_t top = 10;     // leak sites and held sites per allocator listed

    // The allocator whose cache a group of `kind` allocated by `stack` is, or null: leaked
    // (or suppressed).
    const CachingAllocator* heldBy(format::Kind kind, const Stack& stack) const;
};

// A saved report that cannot be re-judged as asked: its figures do not add up, or it does
// not say what the options need (a phase's held memory).
class LeakPolicyError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// One leak group of a trace, as the report builder hands it to judgeTraceLeaks.
struct LeakGroupFigures {
    size_t process = 0; // index in Report::processes
    uint64_t stack_id = 0;
    format::Kind kind = format::Kind::Device;
    format::Api api = format::Api::Unknown;
    bool released_by_teardown = false;
    bool in_scope = true;        // allocated in LeakScope::phase (always without one)
    std::optional<size_t> phase; // index in Report::phases of the phase it was made in
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    uint64_t uncertain_bytes = 0;
    uint64_t uncertain_allocations = 0;
    const std::map<int, uint64_t>* bytes_by_device = nullptr; // the analysis's, while it lives
};

// Whether memory of `kind` still live at the end is kept at exit rather than a leak group:
// a block, in a process whose interpreter was seen finalizing.
bool keptAtExit(format::Kind kind, bool interpreter_finalized);

// What a leak site of `kind` says it was allocated through: a block, its allocator.
std::string siteApi(format::Kind kind, format::Api api);

// A group's stack, symbolized on demand (only held candidates, listed and filtered sites
// need one).
using StackOf = std::function<Stack(size_t process, uint64_t stack_id)>;

// Fills the leak figures of `report` (whose processes, kinds, devices and phases are
// listed with zero leaked figures, and whose leak_scope.phase is set) from every leak
// group of its trace: summary, leak_scope, leaks, held_at_exit, and the leaked figures
// per process, kind, device and phase.
void judgeTraceLeaks(Report& report, const std::vector<LeakGroupFigures>& groups,
                     const LeakPolicy& policy, const StackOf& stack_of);

// Judges a saved report again with `policy`: it was made with some table (the built-in
// one, unless `report` was given another) and no suppressions; its listed leak and held
// sites are classified anew and its figures follow them, as judgeTraceLeaks would have
// made them. What a saved report cannot tell (docs/analysis.md, "Saved reports judged
// again") stays as it was. Throws LeakPolicyError.
void judgeSavedLeaks(Report& report, const LeakPolicy& policy);

} // namespace gmt::analyzer
