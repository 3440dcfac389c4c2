#include "memory_viz_writer.h"

#include "cuda_errors.h"
#include "frame_text.h"
#include "text_safety.h"

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
    FlatMap<Memo> frames;      // by stack id
    FlatMap<uint64_t> streams; // live allocation -> its stream
    struct Held {
        int device;
        uint64_t address;
        uint64_t size;
        uint64_t stream;
        uint32_t stack;
        bool operator<(const Held& o) const {
            return device != o.device ? device < o.device : address < o.address;
        }
    };
    std::vector<Held> held_at_end;
};

MemoryVizWriter::MemoryVizWriter(const Analysis& analysis, std::vector<std::string> outputs,
                                 std::string scratch_directory, bool symbols, bool full_stacks)
    : analysis_(analysis), scratch_directory_(std::move(scratch_directory)),
      full_stacks_(full_stacks), stacks_(analysis, symbols) {
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
        return;
    }
    const format::Event& e = r.event;
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
    Section& sec = section(s, l.charge.device);
    *s.streams.tryEmplace(l.address).first = e.stream;
    const uint64_t size = l.charge.bytes;
    entry(s, sec, Entry{"segment_alloc", l.address, size, e.stream, e.time_ns, e.stack_id, {}});
    entry(s, sec, Entry{"alloc", l.address, size, e.stream, e.time_ns, e.stack_id, {}});
}

void MemoryVizWriter::ended(const LifetimeInfo& l, uint64_t time_ns, LifetimeEnd how,
                            const format::Event* cause) {
    if (!hasDeviceAddress(l)) {
        return;
    }
    Snapshot& s = snapshot(l.charge.process);
    uint64_t stream = 0;
    if (const uint64_t* found = s.streams.find(l.address)) {
        stream = *found;
        s.streams.erase(l.address);
    }
    const uint64_t size = l.charge.bytes;
    if (how == LifetimeEnd::ProcessEnd) {
        s.held_at_end.push_back({l.charge.device, l.address, size, stream, l.charge.stack});
        return;
    }
    // The free's own stack, as torch records it; none for an end nobody called.
    const uint32_t stack = cause && how != LifetimeEnd::Replaced ? cause->stack_id : 0;
    Section& sec = section(s, l.charge.device);
    entry(s, sec, Entry{"free_requested", l.address, size, stream, time_ns, stack, {}});
    entry(s, sec, Entry{"free_completed", l.address, size, stream, time_ns, stack, {}});
    entry(s, sec, Entry{"segment_free", l.address, size, stream, time_ns, stack, {}});
}

void MemoryVizWriter::segments(Snapshot& s, PickleWriter& pickle) {
    std::sort(s.held_at_end.begin(), s.held_at_end.end());
    pickle.emptyList();
    PickleBatch list(pickle, PickleBatch::Of::List);
    const int sec = kSegmentsSection;
    for (const Snapshot::Held& h : s.held_at_end) {
        list.item();
        pickle.emptyDict();
        pickle.mark();
        string(s, pickle, sec, "device");
        pickle.integer(h.device);
        string(s, pickle, sec, "address");
        pickle.unsignedInteger(h.address);
        for (const char* key : {"total_size", "allocated_size", "active_size", "requested_size"}) {
            string(s, pickle, sec, key);
            pickle.unsignedInteger(h.size);
        }
        string(s, pickle, sec, "stream");
        pickle.unsignedInteger(h.stream);
        // torch's line between its small (<= 1 MiB) and large pools.
        string(s, pickle, sec, "segment_type");
        string(s, pickle, sec, h.size <= (1u << 20) ? "small" : "large");
        string(s, pickle, sec, "segment_pool_id");
        pickle.integer(0);
        pickle.integer(0);
        pickle.tuple2();
        string(s, pickle, sec, "is_expandable");
        pickle.boolean(false);
        string(s, pickle, sec, "frames");
        frames(s, pickle, sec, h.stack);
        string(s, pickle, sec, "blocks");
        pickle.emptyList();
        pickle.mark();
        pickle.emptyDict();
        pickle.mark();
        string(s, pickle, sec, "address");
        pickle.unsignedInteger(h.address);
        string(s, pickle, sec, "size");
        pickle.unsignedInteger(h.size);
        string(s, pickle, sec, "requested_size");
        pickle.unsignedInteger(h.size);
        string(s, pickle, sec, "state");
        string(s, pickle, sec, "active_allocated");
        string(s, pickle, sec, "frames");
        frames(s, pickle, sec, h.stack);
        pickle.setItems();
        pickle.appends();
        pickle.setItems();
    }
    list.end();
}

void MemoryVizWriter::finish(const Report*) {
    for (auto& sp : snapshots_) {
        Snapshot& s = *sp;
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
