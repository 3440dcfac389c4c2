#include "export/trace_event_writer.h"

#include "base/cuda_errors.h"
#include "base/flat_map.h"
#include "base/hex.h"
#include "base/human_bytes.h"
#include "export/json_text.h"
#include "views/frame_text.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

// Thread ids the trace never uses (a kernel's pid_max is at most 2^22): lanes after a
// thread's first one (counting up), the phases track and each thread's track of pushed
// phases (counting down from it).
constexpr uint32_t kLaneTidBase = 1u << 30;
constexpr uint32_t kPhaseTid = (1u << 30) - 1;
constexpr uint64_t kFirstSyntheticPid = 1u << 30;
constexpr size_t kMaxCachedTexts = 1 << 16;
// Counter keys besides the kinds: a GPU's total; the "device" of memory not on a GPU.
constexpr int kTotal = -1;
constexpr int kHost = -2;
// Frames in a slice's stack text: as many as a reader looks at; the report has them all.
constexpr size_t kStackFrames = 16;

std::string gpuName(int device) {
    return device >= 0 ? "GPU " + std::to_string(device) : std::string("GPU ?");
}

} // namespace

struct TraceEventWriter::Thread {
    uint32_t order = 0;              // first seen: which thread of its process
    std::vector<uint32_t> lane_tids; // lane k's track
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free_lanes;
    std::vector<std::pair<uint64_t, uint32_t>> ending; // (ended at, lane): free after then
};

struct TraceEventWriter::OpenPhase {
    std::string name;
    uint64_t start = 0;
};

struct TraceEventWriter::Process {
    // A level of a thread's pushed phases (as in phase_tracker.h): the pushed phase and
    // the one marked inside it.
    struct PhaseLevel {
        std::optional<OpenPhase> pushed;
        std::optional<OpenPhase> marked;
    };
    struct PhaseThread {
        uint32_t track = 0;
        std::vector<PhaseLevel> levels;
    };

    uint64_t pid = 0;
    std::unordered_map<uint32_t, Thread> threads;
    struct Held {
        uint32_t tid;
        uint32_t lane;
    };
    FlatMap<Held> held[kAddressSpaces];
    std::map<std::pair<int, int>, uint64_t> live; // (device, kind) -> bytes
    std::map<std::pair<int, int>, std::string> counter_prefix;
    uint32_t next_lane_tid = kLaneTidBase;
    std::optional<OpenPhase> marked; // marked outside any pushed phase
    bool phases_named = false;
    std::map<uint32_t, PhaseThread> phase_threads; // by thread id
    uint32_t next_phase_track = kPhaseTid - 1;
    uint32_t last_tid = 0;
    uint32_t recent_tid = 0;
    Thread* recent_thread = nullptr; // threads' nodes never move
};

TraceEventWriter::TraceEventWriter(const Analysis& analysis, const std::string& output,
                                   const FrameSource& frames, bool full_stacks)
    : analysis_(analysis), out_(output), full_stacks_(full_stacks), stacks_(analysis, frames) {
    out_.write("{\"traceEvents\":[\n");
}

TraceEventWriter::~TraceEventWriter() = default;

void TraceEventWriter::event(std::string& line) {
    if (!first_) {
        out_.write(",\n");
    }
    first_ = false;
    out_.write(line);
    line.clear();
}

void TraceEventWriter::where(uint64_t pid, uint64_t tid, uint64_t time_ns) {
    line_ += ",\"pid\":";
    appendInt(line_, pid);
    line_ += ",\"tid\":";
    appendInt(line_, tid);
    ts(line_, time_ns);
}

void TraceEventWriter::ts(std::string& line, uint64_t time_ns) {
    if (!origin_ns_) {
        // Every header precedes the first event (the reading pass takes non-event records
        // first), so the earliest start is known by now.
        uint64_t origin = time_ns;
        for (const auto& p : analysis_.processes()) {
            if (p->header && p->header->start_mono_ns != 0) {
                origin = std::min(origin, p->header->start_mono_ns);
            }
        }
        origin_ns_ = origin;
    }
    line += ",\"ts\":";
    appendMicroseconds(line, time_ns > *origin_ns_ ? time_ns - *origin_ns_ : 0);
}

void TraceEventWriter::metadata(uint64_t pid, std::optional<uint64_t> tid, const char* what,
                                const std::string& name, std::optional<int64_t> sort_index) {
    // {"ph":"M","name":"process_name","pid":..,"tid":..,"args":{"name":..}}, and the same
    // for WHAT_sort_index.
    auto one = [&](const char* suffix, const char* arg, const std::string& value_json) {
        line_ += "{\"ph\":\"M\",\"name\":\"";
        line_ += what;
        line_ += suffix;
        line_ += "\",\"pid\":";
        appendInt(line_, pid);
        line_ += ",\"tid\":";
        appendInt(line_, tid.value_or(0));
        line_ += ",\"args\":{\"";
        line_ += arg;
        line_ += "\":";
        line_ += value_json;
        line_ += "}}";
        event(line_);
    };
    std::string value;
    appendJsonString(value, name);
    one("_name", "name", value);
    if (sort_index) {
        value.clear();
        appendInt(value, *sort_index);
        one("_sort_index", "sort_index", value);
    }
}

TraceEventWriter::Process& TraceEventWriter::process(uint32_t index) {
    while (processes_.size() <= index) {
        processes_.push_back(nullptr);
    }
    auto& p = processes_[index];
    if (p) {
        return *p;
    }
    p = std::make_unique<Process>();
    const ProcessData& data = *analysis_.processes()[index];
    // The real pid, unless another trace of this export already has it (ranks on several
    // hosts): then one no kernel hands out, so that their tracks stay apart.
    uint64_t pid = data.header ? data.header->pid : 0;
    const bool taken = pid == 0 || std::any_of(processes_.begin(), processes_.end(), [&](auto& o) {
                           return o && o.get() != p.get() && o->pid == pid;
                       });
    p->pid = taken ? kFirstSyntheticPid + index : pid;
    std::string name = "pid " + std::to_string(data.header ? data.header->pid : 0);
    int64_t sort = index;
    if (data.header && data.header->rank >= 0) {
        name = "rank " + std::to_string(data.header->rank) + " (" + name + ")";
        sort = data.header->rank;
    }
    if (data.header && !data.header->command.empty()) {
        name += ": " + data.header->command.substr(0, 200);
    }
    metadata(p->pid, {}, "process", name, sort);
    return *p;
}

TraceEventWriter::Thread& TraceEventWriter::thread(Process& p, uint32_t tid) {
    if (p.recent_thread && p.recent_tid == tid) {
        return *p.recent_thread; // most events come from the thread of the previous one
    }
    auto [it, inserted] = p.threads.try_emplace(tid);
    p.recent_tid = tid;
    p.recent_thread = &it->second;
    if (inserted) {
        it->second.order = static_cast<uint32_t>(p.threads.size() - 1);
        it->second.lane_tids.push_back(tid);
        metadata(p.pid, tid, "thread", "thread " + std::to_string(tid),
                 int64_t{it->second.order} << 16);
    }
    return it->second;
}

void TraceEventWriter::counter(Process& p, int device, int kind, uint64_t time_ns, uint64_t bytes) {
    // The event's first part depends on the process and the counter only: made once.
    std::string& prefix = p.counter_prefix[{device, kind}];
    if (prefix.empty()) {
        const auto k = static_cast<format::Kind>(kind);
        const std::string kind_name(format::kindName(k));
        std::string name;
        if (kind == kTotal) {
            name = gpuName(device) + " live";
        } else if (device != kHost) {
            name = gpuName(device) + " live " + kind_name;
        } else {
            // Not on a GPU: pinned host memory, host-located VMM handles.
            name =
                (k == format::Kind::HostPinned ? std::string("pinned host") : "host " + kind_name) +
                " live";
        }
        prefix = "{\"ph\":\"C\",\"name\":";
        appendJsonString(prefix, name);
        prefix += ",\"pid\":";
        appendInt(prefix, p.pid);
    }
    line_ += prefix;
    ts(line_, time_ns);
    line_ += ",\"args\":{\"bytes\":";
    appendInt(line_, bytes);
    line_ += "}}";
    event(line_);
}

void TraceEventWriter::charge(const LifetimeInfo& l, uint64_t time_ns, bool add) {
    Process& p = process(l.charge.process);
    const int device = l.charge.resident ? std::max(l.charge.device, -1) : kHost;
    const int kind = static_cast<int>(l.charge.kind);
    auto change = [&](uint64_t& v) {
        v = add ? v + l.charge.bytes : v - std::min(v, l.charge.bytes);
    };
    uint64_t& by_kind = p.live[{device, kind}];
    change(by_kind);
    if (device != kHost) {
        uint64_t& total = p.live[{device, kTotal}];
        change(total);
        counter(p, device, kTotal, time_ns, total);
    }
    counter(p, device, kind, time_ns, by_kind);
}

const std::string& TraceEventWriter::sliceName(format::Api api, uint64_t bytes) {
    const std::pair<int, uint64_t> key{static_cast<int>(api), bytes};
    if (auto it = slice_names_.find(key); it != slice_names_.end()) {
        return it->second;
    }
    if (slice_names_.size() >= kMaxCachedTexts) {
        slice_names_.clear();
    }
    std::string name;
    appendJsonString(name, std::string(format::apiName(api)) + " " + humanBytes(bytes, 1));
    return slice_names_.emplace(key, std::move(name)).first->second;
}

const std::string& TraceEventWriter::stackText(uint32_t process, uint32_t stack) {
    const uint64_t key = uint64_t{process} << 32 | stack;
    if (auto it = stack_text_.find(key); it != stack_text_.end()) {
        return it->second;
    }
    if (stack_text_.size() >= kMaxCachedTexts) {
        stack_text_.clear();
    }
    std::string text;
    for (const FrameText& line : gmt::analyzer::stackText(
             stacks_.frames(process, stack), {.full = full_stacks_, .max_frames = kStackFrames})) {
        if (!text.empty()) {
            text += '\n';
        }
        text += line.str();
    }
    std::string json;
    appendJsonString(json, text);
    return stack_text_.emplace(key, std::move(json)).first->second;
}

void TraceEventWriter::record(uint32_t index, const Record& r) {
    switch (r.tag) {
    case format::RecordTag::Phase:
        phase(process(index), r.phase);
        return;
    case format::RecordTag::Event:
        break;
    default:
        return;
    }
    const format::Event& e = r.event;
    Process& p = process(index);
    thread(p, e.tid);
    p.last_tid = e.tid;
    const bool allocation = e.op == format::Op::Alloc ||
                            (e.op == format::Op::VmmCreate && !(e.flags & format::kFlagImported));
    if (!allocation || e.result == 0) {
        return;
    }
    line_ += "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"failure\",\"name\":";
    appendJsonString(line_,
                     "failed " + std::string(format::apiName(e.api)) + " " + humanBytes(e.size, 1));
    where(p.pid, e.tid, e.time_ns);
    line_ += ",\"args\":{\"error\":";
    appendJsonString(line_, errorName(e.api, e.result));
    line_ += ",\"size\":";
    appendInt(line_, e.size);
    line_ += ",\"device\":";
    appendInt(line_, e.device);
    line_ += ",\"tid\":";
    appendInt(line_, e.tid);
    line_ += ",\"stack\":";
    line_ += stackText(index, e.stack_id);
    line_ += "}}";
    event(line_);
}

void TraceEventWriter::began(const LifetimeInfo& l, const format::Event& e) {
    Process& p = process(l.charge.process);
    Thread& t = thread(p, e.tid);
    // A lane is free once its allocation ended strictly before this one begins: slices
    // that only touch could be read as overlapping after rounding.
    std::erase_if(t.ending, [&](const std::pair<uint64_t, uint32_t>& x) {
        if (x.first < e.time_ns) {
            t.free_lanes.push(x.second);
            return true;
        }
        return false;
    });
    uint32_t lane = 0;
    if (!t.free_lanes.empty()) {
        lane = t.free_lanes.top();
        t.free_lanes.pop();
    } else {
        lane = static_cast<uint32_t>(t.lane_tids.size());
        if (lane > 0) {
            const uint32_t lane_tid = p.next_lane_tid++;
            t.lane_tids.push_back(lane_tid);
            metadata(p.pid, lane_tid, "thread",
                     std::to_string(e.tid) + " allocations #" + std::to_string(lane),
                     (int64_t{t.order} << 16) + std::min<uint32_t>(lane, 0xffff));
        }
    }
    *p.held[addressSpace(l.charge.kind)].tryEmplace(l.address).first = Process::Held{e.tid, lane};
    charge(l, e.time_ns, true);
}

void TraceEventWriter::ended(const LifetimeInfo& l, uint64_t time_ns, LifetimeEnd how,
                             const format::Event*) {
    Process& p = process(l.charge.process);
    auto& held = p.held[addressSpace(l.charge.kind)];
    const Process::Held* found = held.find(l.address);
    if (!found) {
        return;
    }
    const Process::Held h = *found;
    held.erase(l.address);
    Thread& t = p.threads.at(h.tid);
    t.ending.emplace_back(time_ns, h.lane);
    charge(l, time_ns, false);

    line_ += "{\"ph\":\"X\",\"cat\":\"allocation\",\"name\":";
    line_ += sliceName(l.api, l.charge.bytes);
    where(p.pid, t.lane_tids[h.lane], l.begin_ns);
    line_ += ",\"dur\":";
    appendMicroseconds(line_, time_ns > l.begin_ns ? time_ns - l.begin_ns : 0);
    line_ += ",\"args\":{\"address\":\"";
    appendHex(line_, l.address);
    line_ += "\",\"size\":";
    appendInt(line_, l.charge.bytes);
    line_ += ",\"kind\":\"";
    line_ += format::kindName(l.charge.kind);
    line_ += "\",\"device\":";
    appendInt(line_, l.charge.device);
    line_ += ",\"end\":\"";
    line_ += lifetimeEndName(how);
    line_ += "\",\"stack\":";
    line_ += stackText(l.charge.process, l.charge.stack);
    line_ += "}}";
    event(line_);
}

void TraceEventWriter::freeError(uint32_t index, const FreeError& error) {
    Process& p = process(index);
    line_ += "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"error\",\"name\":";
    appendJsonString(line_, std::string(errorTypeName(error.type)) + " " +
                                std::string(format::apiName(error.api)));
    where(p.pid, p.last_tid, error.time_ns);
    line_ += ",\"args\":{\"address\":\"";
    appendHex(line_, error.address);
    line_ += "\",\"detail\":";
    appendJsonString(line_, error.detail);
    line_ += ",\"tid\":";
    appendInt(line_, p.last_tid);
    line_ += ",\"stack\":";
    line_ += stackText(index, error.stack);
    if (error.allocation_stack != 0) {
        line_ += ",\"allocation_stack\":";
        line_ += stackText(index, error.allocation_stack);
    }
    line_ += "}}";
    event(line_);
}

void TraceEventWriter::phase(Process& p, const format::PhaseInfo& ph) {
    auto found = p.phase_threads.find(ph.tid);
    Process::PhaseThread* thread = found == p.phase_threads.end() ? nullptr : &found->second;
    const bool pushed = thread && !thread->levels.empty();
    switch (ph.kind) {
    case format::PhaseKind::Mark:
        if (pushed) {
            Process::PhaseLevel& level = thread->levels.back();
            closePhase(p, level.marked, thread->track, ph.time_ns);
            level.marked = OpenPhase{ph.name, ph.time_ns};
        } else {
            if (!p.phases_named) {
                p.phases_named = true;
                metadata(p.pid, kPhaseTid, "thread", "phases", -1);
            }
            closePhase(p, p.marked, kPhaseTid, ph.time_ns);
            p.marked = OpenPhase{ph.name, ph.time_ns};
        }
        return;
    case format::PhaseKind::Push:
        if (!thread) {
            thread = &p.phase_threads[ph.tid];
            thread->track = p.next_phase_track--;
            metadata(p.pid, thread->track, "thread", "phases of thread " + std::to_string(ph.tid),
                     -1);
        }
        thread->levels.push_back({OpenPhase{ph.name, ph.time_ns}, std::nullopt});
        return;
    case format::PhaseKind::Pop:
        if (pushed) { // a pop with nothing pushed ends nothing
            Process::PhaseLevel& level = thread->levels.back();
            closePhase(p, level.marked, thread->track, ph.time_ns);
            closePhase(p, level.pushed, thread->track, ph.time_ns);
            thread->levels.pop_back();
        }
        return;
    }
}

void TraceEventWriter::closePhase(Process& p, std::optional<OpenPhase>& open, uint64_t track,
                                  uint64_t time_ns) {
    if (!open) {
        return;
    }
    line_ += "{\"ph\":\"X\",\"cat\":\"phase\",\"name\":";
    appendJsonString(line_, open->name);
    where(p.pid, track, open->start);
    line_ += ",\"dur\":";
    appendMicroseconds(line_, time_ns > open->start ? time_ns - open->start : 0);
    line_ += "}";
    event(line_);
    open.reset();
}

// The process ended: its open phases end with it, innermost first.
void TraceEventWriter::closePhases(Process& p, uint64_t time_ns) {
    for (auto& [tid, thread] : p.phase_threads) {
        while (!thread.levels.empty()) {
            closePhase(p, thread.levels.back().marked, thread.track, time_ns);
            closePhase(p, thread.levels.back().pushed, thread.track, time_ns);
            thread.levels.pop_back();
        }
    }
    closePhase(p, p.marked, kPhaseTid, time_ns);
}

void TraceEventWriter::finish(const Report*) {
    for (uint32_t i = 0; i < processes_.size(); ++i) {
        if (processes_[i]) {
            closePhases(*processes_[i], analysis_.processes()[i]->endTime());
        }
    }
    out_.write("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gpumemtrace\"}}\n");
    out_.close();
}

} // namespace gmt::analyzer
