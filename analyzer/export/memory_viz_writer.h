// `export --format memory-viz`: one PyTorch memory snapshot (a pickle, pickle_writer.h) per
// process, for pytorch.org/memory_viz and torch.cuda._memory_viz. Each traced allocation
// that has a device address (cudaMalloc*, cuMemAlloc*, pool and managed memory) is a
// segment holding one block of its size: segment_alloc + alloc when it is made,
// free_requested + free_completed + segment_free when it ends (freed, replaced, or released
// by a device reset), so the viewer's timelines show exactly what the analysis counted.
// Failed allocations for lack of memory are `oom` entries. What is still held when the
// process ends is the snapshot's `segments`. Pinned host memory, CUDA arrays and VMM
// handles have no device address of their own and are left out (docs/export.md).
//
// Where the recorder attached to PyTorch's caching allocator (its block events, Op::Block),
// the snapshot is the allocator's own, as torch.cuda.memory._snapshot() writes it: its
// segment_alloc/segment_free, and the tensors' alloc, free_requested and free_completed
// inside them, with the stacks that made them (a free's entries carry its block's
// allocation stack: the recorder takes none for a free). The cudaMalloc that made a
// segment is then not a block of its own: every allocation is held back one event, until
// the next says whether it was the allocator's segment_alloc. Segments held at the end list
// their blocks, with the free space between them as inactive blocks.
//
// device_traces is a list per GPU ordinal, but the trace interleaves GPUs: the events of
// GPU 0 go straight to the file, those of other GPUs to a scratch file each, appended in
// ordinal order at the end. Memory: the live allocations (stream, size) and the memo
// tables (strings and frame lists, per GPU).
#pragma once

#include "analysis/analysis.h"
#include "base/flat_map.h"
#include "base/output_file.h"
#include "export/export_writer.h"
#include "export/pickle_writer.h"
#include "export/stack_cache.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

class MemoryVizWriter final : public ExportWriter {
  public:
    // outputs[i]: where process i's snapshot goes; scratch files go to scratch_directory.
    MemoryVizWriter(const Analysis& analysis, std::vector<std::string> outputs,
                    std::string scratch_directory, const FrameSource& frames, bool full_stacks);
    ~MemoryVizWriter() override;

    void record(uint32_t process, const Record& record) override;
    void began(const LifetimeInfo& lifetime, const format::Event& e) override;
    void ended(const LifetimeInfo& lifetime, uint64_t time_ns, LifetimeEnd how,
               const format::Event* cause) override;
    void finish(const Report* report) override;

  private:
    struct Section;
    struct Snapshot;
    struct Entry {
        const char* action;
        uint64_t address;
        uint64_t size;
        uint64_t stream;
        uint64_t time_ns;
        uint32_t stack;
        std::optional<uint64_t> device_free;
    };
    Snapshot& snapshot(uint32_t process);
    Section& section(Snapshot& s, int device);
    void entry(Snapshot& s, Section& section, const Entry& e);
    void string(Snapshot& s, PickleWriter& pickle, int section, const char* literal);
    void frames(Snapshot& s, PickleWriter& pickle, int section, uint32_t stack);
    void segments(Snapshot& s, PickleWriter& pickle);
    void block(Snapshot& s, const format::Event& e);
    void flushPending(Snapshot& s);

    const Analysis& analysis_;
    std::string scratch_directory_;
    bool full_stacks_;
    StackCache stacks_;
    std::vector<std::unique_ptr<Snapshot>> snapshots_;
};

} // namespace gmt::analyzer
