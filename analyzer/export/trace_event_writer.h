// `export --format perfetto`: Chrome trace-event JSON, which ui.perfetto.dev and
// chrome://tracing load. Per process (pid, named after its command and rank):
//
// - counters of live bytes: "GPU N live" (the GPU's device-resident bytes, what the
//   report's peak counts) and "GPU N live KIND" per kind, "pinned host live" and "host vmm
//   live" for memory that is not on a GPU; one value per change, in time order;
// - one complete ("X") slice per allocation lifetime, named "API size", with its address,
//   kind, device, how it ended and its stack as text in args. Lifetimes overlap, and
//   slices on one track must nest, so each thread's allocations are laid out on lanes:
//   the thread's own track first, then tracks named "TID allocations #k"; a lane is reused
//   once its allocation has ended. Lanes grow with the live allocations, not the trace;
// - instant events for failed allocations and bad frees (process-scoped: they are not
//   nested in any slice);
// - phases as slices: marks made outside any pushed phase on a "phases" track, and each
//   thread's pushed phases (gpumemtrace_push_phase, NVTX ranges), with what was marked
//   inside them, nested on a "phases of thread TID" track of its own.
//
// Timestamps are microseconds (three decimals: nanosecond precision) from the trace's
// start, the earliest process start. Slices are written when they end, so events are not
// in time order; the viewers sort them.
#pragma once

#include "analysis/analysis.h"
#include "base/output_file.h"
#include "export/export_writer.h"
#include "export/stack_cache.h"

#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

class TraceEventWriter final : public ExportWriter {
  public:
    TraceEventWriter(const Analysis& analysis, const std::string& output, const FrameSource& frames,
                     bool full_stacks);
    ~TraceEventWriter() override;

    void record(uint32_t process, const Record& record) override;
    void began(const LifetimeInfo& lifetime, const format::Event& e) override;
    void ended(const LifetimeInfo& lifetime, uint64_t time_ns, LifetimeEnd how,
               const format::Event* cause) override;
    void freeError(uint32_t process, const FreeError& error) override;
    void finish(const Report* report) override;

  private:
    struct Thread;
    struct Process;
    Process& process(uint32_t index);
    Thread& thread(Process& p, uint32_t tid);
    void event(std::string& line); // one event, with its separator
    void ts(std::string& line, uint64_t time_ns);
    // An event's process, thread (track) and time, appended to line_.
    void where(uint64_t pid, uint64_t tid, uint64_t time_ns);
    void counter(Process& p, int device, int kind, uint64_t time_ns, uint64_t bytes);
    const std::string& sliceName(format::Api api, uint64_t bytes); // as JSON, cached
    void charge(const LifetimeInfo& l, uint64_t time_ns, bool add);
    const std::string& stackText(uint32_t process, uint32_t stack);
    struct OpenPhase;
    void phase(Process& p, const format::PhaseInfo& phase);
    void closePhase(Process& p, std::optional<OpenPhase>& open, uint64_t track, uint64_t time_ns);
    void closePhases(Process& p, uint64_t time_ns);
    void metadata(uint64_t pid, std::optional<uint64_t> tid, const char* what,
                  const std::string& name, std::optional<int64_t> sort_index = {});

    const Analysis& analysis_;
    OutputFile out_;
    bool full_stacks_;
    StackCache stacks_;
    std::optional<uint64_t> origin_ns_;
    bool first_ = true;
    std::vector<std::unique_ptr<Process>> processes_;
    std::unordered_map<uint64_t, std::string> stack_text_;        // process << 32 | stack, bounded
    std::map<std::pair<int, uint64_t>, std::string> slice_names_; // (API, bytes), bounded
    std::string line_;
};

} // namespace gmt::analyzer
