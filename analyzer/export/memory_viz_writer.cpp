#include "export/memory_viz_writer.h"

#include "analysis/caching/allocator_rules.h"
#include "base/cuda_errors.h"
#include "base/text_safety.h"
#include "views/frame_text.h"

#include <algorithm>
#include <climits>

namespace gmt::analyzer {

namespace {

// Where a memo entry was defined: usable by the device lists from that one on (the lists
// are joined in ordinal order) and by the segments, which come last.
struct Memo {
    int section = 0;
    uint32_t index = 0;
};
constexpr int kSegmentsSection = INT_MAX;

bool hasDeviceAddress(const LifetimeInfo& l) {
    const format::Kind k = l.charge.kind;
    return (k == format::Kind::Device || k == format::Kind::Pool || k == format::Kind::Managed) &&
           l.charge.resident && l.charge.device >= 0 && l.address != 0;
}

std::string frameName(const Frame& f) {
    return validUtf8(frameText(f).what);
}

// torch writes "??" for a file it does not know; the module says at least which library.
std::string frameFile(const Frame& f) {
    if (!f.file.empty()) {
        return validUtf8(f.file);
    }
    return f.module.empty() ? "??" : validUtf8(f.module);
}

// An allocation still held when its process ended: one of the snapshot's segments.
struct Held {
    int device;
    uint64_t address;
    uint64_t size;
    uint64_t stream;
    uint32_t stack;
    bool allocator_segment; // its blocks are the caching allocator's (block_tracker.h)
    bool expandable = false;
    bool operator<(const Held& o) const {
        return device != o.device ? device < o.device : address < o.address;
    }
};

// A held segment's blocks: the caching allocator's, rebuilt by the analysis, or else the
// allocation itself, one block of its size.
std::vector<BlockTracker::BlockView> heldBlocks(const ProcessData& p, const Held& h) {
    if (h.allocator_segment) {
        return p.blocks ? p.blocks->blocksIn(h.device, h.address, h.size)
                        : std::vector<BlockTracker::BlockView>{};
    }
    return {{h.address, h.size, h.size, h.stream, h.stack, true}};
}

} // namespace

struct MemoryVizWriter::Section {
    int device = 0;
    std::optional<OutputFile> scratch; // absent for GPU 0, written to the snapshot's file
    std::unique_ptr<PickleWriter> pickle;
    std::unique_ptr<PickleBatch> items;
};

struct MemoryVizWriter::Snapshot {
    explicit Snapshot(const std::string& path) : out(path), pickle(out) {}
    OutputFile out;
    PickleWriter pickle;
    PickleBatch top{pickle, PickleBatch::Of::Dict};
    PickleBatch devices{pickle, PickleBatch::Of::List};
    uint32_t process = 0;
    std::map<int, std::unique_ptr<Section>> sections;
    uint32_t next_memo = 0;
    // Keyed by the literal's address: every string interned here is one of this file's
    // literals, so the same address is the same text.
    FlatMap<Memo> strings;
    FlatMap<Memo> frames; // by stack id
    // A live allocation: its stream, and its size as its block of its own was written.
    struct Live {
        uint64_t stream;
        uint64_t size;
    };
    FlatMap<Live> live;
    std::vector<Held> held_at_end;

    // The device allocation of the last event, not written yet: the next event says whether
    // it is a caching allocator's segment (its segment_alloc at the same address).
    struct Pending {
        int device;
        uint64_t address;
        uint64_t size;
        uint64_t stream;
        uint64_t time_ns;
        uint32_t stack;
    };
    std::optional<Pending> pending;
    // Allocations that are the allocator's segments: their ends are its segment_free.
    FlatMap<uint8_t> allocator_segments;
    // The allocator's blocks not yet free for reuse: the size and stack their alloc entry
    // gave.
    struct BlockAlloc {
        uint64_t size;
        uint32_t stack;
    };
    FlatMap<BlockAlloc> blocks;
};

MemoryVizWriter::MemoryVizWriter(const Analysis& analysis, std::vector<std::string> outputs,
                                 std::string scratch_directory, const FrameSource& frames,
                                 bool full_stacks)
    : analysis_(analysis), scratch_directory_(std::move(scratch_directory)),
      full_stacks_(full_stacks), stacks_(analysis, frames) {
    for (uint32_t i = 0; i < outputs.size(); ++i) {
        auto s = std::make_unique<Snapshot>(outputs[i]);
        s->process = i;
        // {'device_traces': [[GPU 0's entries...], ...  — the rest is written by finish().
        s->pickle.protocol();
        s->pickle.emptyDict();
        s->top.item();
        s->pickle.string("device_traces");
        s->pickle.emptyList();
        s->devices.item();
        s->pickle.emptyList();
        auto gpu0 = std::make_unique<Section>();
        gpu0->pickle = std::make_unique<PickleWriter>(s->out);
        gpu0->items = std::make_unique<PickleBatch>(*gpu0->pickle, PickleBatch::Of::List);
        s->sections.emplace(0, std::move(gpu0));
        snapshots_.push_back(std::move(s));
    }
}

MemoryVizWriter::~MemoryVizWriter() = default;

MemoryVizWriter::Snapshot& MemoryVizWriter::snapshot(uint32_t process) {
    return *snapshots_.at(process);
}

MemoryVizWriter::Section& MemoryVizWriter::section(Snapshot& s, int device) {
    auto it = s.sections.find(device);
    if (it != s.sections.end()) {
        return *it->second;
    }
    auto sec = std::make_unique<Section>();
    sec->device = device;
    sec->scratch.emplace(OutputFile::scratch(scratch_directory_));
    sec->pickle = std::make_unique<PickleWriter>(*sec->scratch);
    sec->items = std::make_unique<PickleBatch>(*sec->pickle, PickleBatch::Of::List);
    sec->pickle->emptyList();
    return *s.sections.emplace(device, std::move(sec)).first->second;
}

void MemoryVizWriter::string(Snapshot& s, PickleWriter& pickle, int section, const char* text) {
    auto [memo, inserted] = s.strings.tryEmplace(reinterpret_cast<uintptr_t>(text));
    if (!inserted && memo->section <= section) {
        pickle.get(memo->index);
        return;
    }
    pickle.string(text);
    *memo = Memo{section, s.next_memo++};
    pickle.put(memo->index);
}

void MemoryVizWriter::frames(Snapshot& s, PickleWriter& pickle, int section, uint32_t stack) {
    if (const Memo* memo = s.frames.find(stack); memo && memo->section <= section) {
        pickle.get(memo->index);
        return;
    }
    const Stack& frames = stacks_.frames(s.process, stack);
    pickle.emptyList();
    PickleBatch items(pickle, PickleBatch::Of::List);
    for (const Frame* f : shownFrames(frames, full_stacks_)) {
        items.item();
        pickle.emptyDict();
        pickle.mark();
        string(s, pickle, section, "name");
        pickle.string(frameName(*f));
        string(s, pickle, section, "filename");
        pickle.string(frameFile(*f));
        string(s, pickle, section, "line");
        pickle.integer(f->line);
        pickle.setItems();
    }
    items.end();
    const Memo memo{section, s.next_memo++};
    pickle.put(memo.index);
    *s.frames.tryEmplace(stack).first = memo;
}

void MemoryVizWriter::entry(Snapshot& s, Section& sec, const Entry& e) {
    const ProcessData& p = *analysis_.processes()[s.process];
    // torch's time_us is wall-clock microseconds; the trace's clock is CLOCK_MONOTONIC,
    // tied to the wall clock by the header.
    uint64_t time_us = e.time_ns / 1000;
    if (p.header && p.header->start_wall_ns != 0) {
        const uint64_t since =
            e.time_ns > p.header->start_mono_ns ? e.time_ns - p.header->start_mono_ns : 0;
        time_us = (p.header->start_wall_ns + since) / 1000;
    }
    PickleWriter& pickle = *sec.pickle;
    const int id = sec.device;
    sec.items->item();
    pickle.emptyDict();
    pickle.mark();
    string(s, pickle, id, "action");
    string(s, pickle, id, e.action);
    string(s, pickle, id, "addr");
    pickle.unsignedInteger(e.address);
    string(s, pickle, id, "size");
    pickle.unsignedInteger(e.size);
    string(s, pickle, id, "stream");
    pickle.unsignedInteger(e.stream);
    string(s, pickle, id, "time_us");
    pickle.unsignedInteger(time_us);
    if (e.device_free) {
        string(s, pickle, id, "device_free");
        pickle.unsignedInteger(*e.device_free);
    }
    string(s, pickle, id, "frames");
    frames(s, pickle, id, e.stack);
    pickle.setItems();
}

void MemoryVizWriter::record(uint32_t process, const Record& r) {
    if (r.tag != format::RecordTag::Event) {
        // A stack record, or the record saying the recorder attached to the caching
        // allocator, may stand between a cudaMalloc and its segment_alloc.
        return;
    }
    const format::Event& e = r.event;
    if (e.op == format::Op::Block) {
        block(snapshot(process), e);
        return;
    }
    flushPending(snapshot(process));
    const bool allocation = e.op == format::Op::Alloc ||
                            (e.op == format::Op::VmmCreate && !(e.flags & format::kFlagImported));
    if (!allocation || e.result == 0 || !isOutOfMemory(e.result) || e.device < 0) {
        return;
    }
    // torch's oom entry: addr holds what the driver had free, as does device_free.
    Snapshot& s = snapshot(process);
    entry(s, section(s, e.device),
          Entry{"oom", e.device_free, e.size, e.stream, e.time_ns, e.stack_id, e.device_free});
}

void MemoryVizWriter::began(const LifetimeInfo& l, const format::Event& e) {
    if (!hasDeviceAddress(l)) {
        return;
    }
    Snapshot& s = snapshot(l.charge.process);
    flushPending(s);
    *s.live.tryEmplace(l.address).first = Snapshot::Live{e.stream, l.charge.bytes};
    s.pending = Snapshot::Pending{l.charge.device, l.address, l.charge.bytes,
                                  e.stream,        e.time_ns, e.stack_id};
}

// The held-back allocation is not the allocator's segment: a segment holding one block.
void MemoryVizWriter::flushPending(Snapshot& s) {
    if (!s.pending) {
        return;
    }
    const Snapshot::Pending p = *s.pending;
    s.pending.reset();
    Section& sec = section(s, p.device);
    entry(s, sec, Entry{"segment_alloc", p.address, p.size, p.stream, p.time_ns, p.stack, {}});
    entry(s, sec, Entry{"alloc", p.address, p.size, p.stream, p.time_ns, p.stack, {}});
}

// A caching allocator's block event is an entry of torch's own trace, action for action
// (format::BlockAction names them as torch does).
void MemoryVizWriter::block(Snapshot& s, const format::Event& e) {
    const auto action = static_cast<format::BlockAction>(e.api);
    if (action == format::BlockAction::SegmentAlloc && s.pending &&
        s.pending->address == e.address) {
        s.pending.reset(); // the allocation is this segment: the entry below stands for it
        *s.allocator_segments.tryEmplace(e.address).first = 1;
    } else {
        flushPending(s);
    }
    if (e.device < 0) {
        return;
    }
    Section& sec = section(s, e.device);
    const Entry base{"", e.address, e.size, e.stream, e.time_ns, e.stack_id, {}};
    auto put = [&](const char* action_name, uint64_t size) {
        Entry x = base;
        x.action = action_name;
        x.size = size;
        entry(s, sec, x);
    };
    switch (action) {
    case format::BlockAction::Alloc:
        *s.blocks.tryEmplace(e.address).first = Snapshot::BlockAlloc{e.size, e.stack_id};
        put("alloc", e.size);
        break;
    case format::BlockAction::FreeRequested:
    case format::BlockAction::FreeCompleted: {
        const Snapshot::BlockAlloc* alloc = s.blocks.find(e.address);
        Entry x = base;
        x.action =
            action == format::BlockAction::FreeCompleted ? "free_completed" : "free_requested";
        x.size = alloc ? alloc->size : e.size;
        // The recorder takes no stack for a block's free (docs/frameworks.md): its entries
        // carry the allocation's frames, as PyTorch's own do when it gathers no free
        // context. A free that has a stack (traces of earlier recorders) keeps its own.
        if (x.stack == 0 && alloc) {
            x.stack = alloc->stack;
        }
        if (action == format::BlockAction::FreeCompleted && alloc) {
            s.blocks.erase(e.address);
        }
        entry(s, sec, x);
        break;
    }
    case format::BlockAction::SegmentAlloc:
        if (const Snapshot::Live* live = s.live.find(e.address);
            live && !s.allocator_segments.find(e.address)) {
            // Written already as a block of its own (another event came between, or the
            // recorder attached after the allocator took the segment): that block ends here
            // and the segment stays.
            put("free_requested", live->size);
            put("free_completed", live->size);
            *s.allocator_segments.tryEmplace(e.address).first = 1;
            break;
        }
        put("segment_alloc", e.size);
        break;
    case format::BlockAction::SegmentFree:
        put("segment_free", e.size);
        break;
    case format::BlockAction::SegmentMap:
        put("segment_map", e.size);
        break;
    case format::BlockAction::SegmentUnmap:
        put("segment_unmap", e.size);
        break;
    case format::BlockAction::Oom: {
        Entry x = base;
        x.action = "oom";
        x.address = e.device_free;
        x.device_free = e.device_free;
        entry(s, sec, x);
        break;
    }
    }
}

void MemoryVizWriter::ended(const LifetimeInfo& l, uint64_t time_ns, LifetimeEnd how,
                            const format::Event* cause) {
    if (!hasDeviceAddress(l)) {
        return;
    }
    Snapshot& s = snapshot(l.charge.process);
    flushPending(s);
    uint64_t stream = 0;
    if (const Snapshot::Live* found = s.live.find(l.address)) {
        stream = found->stream;
        s.live.erase(l.address);
    }
    const bool allocator_segment = s.allocator_segments.erase(l.address);
    const uint64_t size = l.charge.bytes;
    if (how == LifetimeEnd::ProcessEnd) {
        s.held_at_end.push_back(
            {l.charge.device, l.address, size, stream, l.charge.stack, allocator_segment});
        return;
    }
    // The free's own stack, as torch records it; none for an end nobody called.
    const uint32_t stack = cause && how != LifetimeEnd::Replaced ? cause->stack_id : 0;
    Section& sec = section(s, l.charge.device);
    if (allocator_segment) {
        // Freed: the allocator's segment_free came before its cudaFree. Released by a reset
        // or replaced, it ends here, with no block of its own to end.
        if (how != LifetimeEnd::Freed) {
            entry(s, sec, Entry{"segment_free", l.address, size, stream, time_ns, stack, {}});
        }
        return;
    }
    entry(s, sec, Entry{"free_requested", l.address, size, stream, time_ns, stack, {}});
    entry(s, sec, Entry{"free_completed", l.address, size, stream, time_ns, stack, {}});
    entry(s, sec, Entry{"segment_free", l.address, size, stream, time_ns, stack, {}});
}

void MemoryVizWriter::segments(Snapshot& s, PickleWriter& pickle) {
    // Expandable segments are ranges mapped into one reservation (VMM handles, which have
    // no device address of their own here): the allocator's view has them, one segment per
    // contiguous mapped range, as PyTorch lists them.
    if (const ProcessData& p = *analysis_.processes()[s.process]; p.blocks) {
        for (int device : p.blocks->devices()) {
            for (const BlockTracker::SegmentView& seg : p.blocks->segments(device)) {
                if (seg.expandable) {
                    s.held_at_end.push_back(
                        {device, seg.address, seg.bytes, seg.stream, 0, true, true});
                }
            }
        }
    }
    std::sort(s.held_at_end.begin(), s.held_at_end.end());
    pickle.emptyList();
    PickleBatch list(pickle, PickleBatch::Of::List);
    const int sec = kSegmentsSection;
    for (const Held& h : s.held_at_end) {
        list.item();
        pickle.emptyDict();
        pickle.mark();
        const std::vector<BlockTracker::BlockView> blocks =
            heldBlocks(*analysis_.processes()[s.process], h);
        uint64_t allocated = 0, active = 0, requested = 0;
        for (const BlockTracker::BlockView& b : blocks) {
            allocated += b.allocated ? b.bytes : 0;
            active += b.bytes;
            requested += b.allocated ? b.requested : 0;
        }
        string(s, pickle, sec, "device");
        pickle.integer(h.device);
        string(s, pickle, sec, "address");
        pickle.unsignedInteger(h.address);
        string(s, pickle, sec, "total_size");
        pickle.unsignedInteger(h.size);
        for (auto [key, value] :
             {std::pair{"allocated_size", allocated}, std::pair{"active_size", active},
              std::pair{"requested_size", requested}}) {
            string(s, pickle, sec, key);
            pickle.unsignedInteger(value);
        }
        string(s, pickle, sec, "stream");
        pickle.unsignedInteger(h.stream);
        string(s, pickle, sec, "segment_type");
        // An allocation of its own is on torch's side of its line between small (at most
        // 1 MiB) and large requests.
        const auto first_block =
            std::find_if(blocks.begin(), blocks.end(), [](const auto& b) { return b.allocated; });
        const bool small =
            h.allocator_segment
                ? AllocatorRules::smallPool(h.size, h.expandable,
                                            first_block == blocks.end() ? 0 : first_block->bytes)
                : h.size <= AllocatorRules::kSmallSize;
        string(s, pickle, sec, small ? "small" : "large");
        string(s, pickle, sec, "segment_pool_id");
        pickle.integer(0);
        pickle.integer(0);
        pickle.tuple2();
        string(s, pickle, sec, "is_expandable");
        pickle.boolean(h.expandable);
        string(s, pickle, sec, "frames");
        frames(s, pickle, sec, h.stack);
        string(s, pickle, sec, "blocks");
        pickle.emptyList();
        PickleBatch items(pickle, PickleBatch::Of::List);
        // The blocks in address order, the free space between them as inactive blocks (as
        // torch lists a segment: every byte of it in one block).
        uint64_t at = h.address;
        auto put = [&](uint64_t address, uint64_t size, uint64_t asked, const char* state,
                       std::optional<uint32_t> stack) {
            items.item();
            pickle.emptyDict();
            pickle.mark();
            string(s, pickle, sec, "address");
            pickle.unsignedInteger(address);
            string(s, pickle, sec, "size");
            pickle.unsignedInteger(size);
            string(s, pickle, sec, "requested_size");
            pickle.unsignedInteger(asked);
            string(s, pickle, sec, "state");
            string(s, pickle, sec, state);
            string(s, pickle, sec, "frames");
            if (stack) {
                frames(s, pickle, sec, *stack);
            } else {
                pickle.emptyList();
            }
            pickle.setItems();
        };
        for (const BlockTracker::BlockView& b : blocks) {
            if (b.address > at) {
                put(at, b.address - at, 0, "inactive", std::nullopt);
            }
            put(b.address, b.bytes, b.requested,
                b.allocated ? "active_allocated" : "active_pending_free", b.stack);
            at = b.address + b.bytes;
        }
        if (at < h.address + h.size) {
            put(at, h.address + h.size - at, 0, "inactive", std::nullopt);
        }
        items.end();
        pickle.setItems();
    }
    list.end();
}

void MemoryVizWriter::finish(const Report*) {
    for (auto& sp : snapshots_) {
        Snapshot& s = *sp;
        flushPending(s);
        s.sections.at(0)->items->end();
        const int last = s.sections.rbegin()->first;
        for (int device = 1; device <= last; ++device) {
            s.devices.item();
            auto it = s.sections.find(device);
            if (it == s.sections.end()) {
                s.pickle.emptyList();
                continue;
            }
            it->second->items->end();
            s.out.append(*it->second->scratch);
        }
        s.devices.end();
        s.top.item();
        s.pickle.string("segments");
        segments(s, s.pickle);
        s.top.item();
        s.pickle.string("allocator_settings");
        s.pickle.emptyDict();
        s.top.end();
        s.pickle.stop();
        s.out.close();
    }
}

} // namespace gmt::analyzer
