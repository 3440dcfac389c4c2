#include "analysis/analysis.h"

#include "analysis/failure_diagnosis.h"
#include "analysis/whatif/request_stream.h"
#include "base/cuda_errors.h"

#include <algorithm>
#include <set>

namespace gmt::analyzer {

using format::Op;

namespace {
// A fragmentation measurement walks the live set (with the VMM reservations and their
// mappings: Lifetimes::walkSize). At a new peak it is taken when the set
// is tiny, or when the events since the last measurement pay for it (kWalkStepsPerEvent
// allocations walked per event), which bounds the cost per event however often the peak
// moves; a skipped measurement leaves the previous peak's, marked inexact.
constexpr size_t kCheapLiveSet = 64;
constexpr uint64_t kWalkStepsPerEvent = 8;
} // namespace

uint64_t ProcessData::endTime() const {
    const uint64_t trailer_end = trailer ? trailer->end_mono_ns : 0;
    return std::max(trailer_end, last_time_ns);
}

uint64_t ProcessData::granularity(int device) const {
    auto it = devices.find(device);
    if (it != devices.end() && it->second.granularity) {
        return it->second.granularity;
    }
    if (header && header->granularity) {
        return header->granularity;
    }
    return 2u << 20;
}

uint64_t ProcessData::deviceTotal(int device) const {
    auto it = devices.find(device);
    return it == devices.end() ? 0 : it->second.total_bytes;
}

Analysis::Analysis(AnalysisOptions options)
    : options_(options), accounting_(options.timeline_points, options.detail),
      block_accounting_(options.timeline_points) {
    accounting_.onPeakSnapshot([this](const PeakPoint& p) { onPeakSnapshot(p); });
    block_accounting_.onPeakSnapshot([this](const PeakPoint& p) { onBlockPeakSnapshot(p); });
    // The allocations' accounting only, the one every event of a trace goes through; a
    // caching allocator's blocks keep theirs on this thread (a second ring and thread, not
    // measured: the analyzer's bench traces have no block events).
    if (AccountingThread::wanted()) {
        accounting_.startThread();
    }
}

Analysis::~Analysis() = default;

uint32_t Analysis::addProcess(const std::string& trace_file, const format::Prologue& prologue) {
    auto p = std::make_unique<ProcessData>();
    p->trace_file = trace_file;
    p->prologue = prologue;
    auto index = static_cast<uint32_t>(processes_.size());
    p->lifetimes = std::make_unique<Lifetimes>(index, accounting_, options_.max_listed);
    p->lifetimes->setObserver(lifetime_observer_);
    p->phase_tracker = std::make_unique<PhaseTracker>(options_.max_listed, options_.phase);
    if (prologue.dropped_events > 0) {
        // Known from the start (drop mode counts in the prologue as it goes): errors are
        // marked as they are found.
        p->missing.dropped_events = prologue.dropped_events;
        p->lifetimes->onUnlocatedLoss();
    }
    processes_.push_back(std::move(p));
    return index;
}

void Analysis::setLifetimeObserver(LifetimeObserver* observer) {
    lifetime_observer_ = observer;
    for (auto& p : processes_) {
        p->lifetimes->setObserver(observer);
    }
}

void Analysis::onGap(ProcessData& p, const Record& r) {
    MissingEvents& m = p.missing;
    m.missing_positions += r.missing_before;
    ++m.range_count;
    if (m.ranges.size() < options_.max_listed) {
        MissingRange range;
        range.first_position = r.position - r.missing_before;
        range.positions = r.missing_before;
        range.after_time_ns = p.events ? p.last_time_ns : 0;
        range.before_time_ns = r.tag == format::RecordTag::Event ? r.event.time_ns : 0;
        m.ranges.push_back(range);
    }
    p.lifetimes->onGap();
}

void Analysis::onOtherRecord(uint32_t process, const Record& r) {
    ProcessData& p = *processes_[process];
    if (r.missing_before > 0) [[unlikely]] {
        onGap(p, r);
    }
    switch (r.tag) {
    case format::RecordTag::Header:
        p.header = r.header;
        break;
    case format::RecordTag::Device:
        p.devices[r.device.ordinal] = r.device;
        break;
    case format::RecordTag::Module:
        p.modules.push_back(r.module);
        break;
    case format::RecordTag::Stack:
        p.stacks[r.stack.id].assign(r.stack.frames.begin(), r.stack.frames.begin() + r.stack.depth);
        // A stack id written again (a damaged or concatenated trace) takes its new frames.
        if (r.stack.python_depth > 0) {
            p.python_stacks[r.stack.id].assign(r.stack.python.begin(),
                                               r.stack.python.begin() + r.stack.python_depth);
        } else {
            p.python_stacks.erase(r.stack.id);
        }
        break;
    case format::RecordTag::PythonCode:
        p.python_code[r.python_code.id] = r.python_code;
        break;
    case format::RecordTag::CachingAllocator:
        p.caching_allocator = r.caching_allocator;
        blocksOf(p, process).setRules(AllocatorRules::parse(r.caching_allocator.config));
        break;
    case format::RecordTag::Event:
        onPlainEvents(process, {&r.event, 1}, UINT64_MAX);
        break;
    case format::RecordTag::Trailer:
        p.trailer = r.trailer;
        break;
    case format::RecordTag::Recording:
        if (r.recording.change == format::RecordingChange::Pause) {
            p.lifetimes->onPause();
        }
        ++p.recording_changes;
        if (p.recording.size() < options_.max_listed) {
            p.recording.push_back(r.recording);
        }
        break;
    case format::RecordTag::AggregateSummary:
        p.aggregate = r.aggregate;
        if (r.aggregate.folded_estimated_blocks > 0) {
            blocksOf(p, process).addFoldedEstimated(r.aggregate.folded_estimated_blocks);
        }
        break;
    case format::RecordTag::SiteTotals:
        // A caching allocator's folded blocks count at the tensor level, never with the
        // process's own allocations (as their block events would).
        if (r.site_totals.kind == static_cast<uint8_t>(format::Kind::Block)) {
            blocksOf(p, process).addFolded(r.site_totals);
        } else {
            p.lifetimes->addFolded(r.site_totals);
        }
        break;
    case format::RecordTag::PhaseTotals:
        p.phase_tracker->onEvent(p.last_time_ns, accounting_.processLive(process),
                                 r.phase_totals.allocations, r.phase_totals.bytes,
                                 r.phase_totals.frees);
        break;
    case format::RecordTag::FoldedPeak:
        // The moment of most live bytes since the last Phase record, with what the trace
        // folded (format/aggregate.h): counted in the phases open then.
        p.phase_tracker->onEvent(p.folded.peakTime(r.folded_peak.after_ns),
                                 accounting_.processLive(process) + r.folded_peak.bytes, 0, 0, 0);
        break;
    case format::RecordTag::FoldedMark:
        p.folded.onMark(r.folded_mark);
        break;
    case format::RecordTag::Phase:
        p.lifetimes->setPhase(p.phase_tracker->onPhase(
            r.phase, accounting_.processLive(process) + p.folded.atPhase(r.phase.time_ns)));
        if (p.phases.size() < options_.max_listed) {
            p.phases.push_back({r.phase, p.phase_tracker->recordPhase()});
        }
        break;
    }
}

void Analysis::onBlockOrPhaseEvent(ProcessData& p, uint32_t process, const format::Event& e) {
    p.allocation_requests += makesAllocationRequest(e);
    if (e.op == Op::Block) {
        onBlockEvent(p, process, e);
        return;
    }
    // Inside a phase: what this event did is the change in the process's counters.
    const ProcessCounters& c = p.lifetimes->counters();
    const uint64_t allocations = c.allocations, frees = c.frees;
    const bool failed = p.lifetimes->onEvent(e);
    const uint64_t new_allocations = c.allocations - allocations;
    p.phase_tracker->onEvent(e.time_ns, accounting_.processLive(process), new_allocations,
                             new_allocations ? e.size : 0, c.frees - frees);
    if (failed) {
        onFailure(process, e);
    }
}

BlockTracker& Analysis::blocksOf(ProcessData& p, uint32_t process) {
    if (!p.blocks) {
        p.blocks = std::make_unique<BlockTracker>(process, block_accounting_);
    }
    return *p.blocks;
}

// A block event is the tensor level: it never changes the process's own allocations (the
// segments are Alloc and VmmMap events of their own).
void Analysis::onBlockEvent(ProcessData& p, uint32_t process, const format::Event& e) {
    blocksOf(p, process).onEvent(e, p.phase_tracker->current());
}

void Analysis::onBlockPeakSnapshot(const PeakPoint& peak) {
    size_t live = 0;
    for (const auto& p : processes_) {
        live += p->blocks ? p->blocks->walkSize() : 0;
    }
    if (live > kCheapLiveSet &&
        (events_ - events_at_last_block_measure_) * kWalkStepsPerEvent < live) {
        for (auto& entry : block_peak_space_) {
            entry.exact = false;
        }
        return;
    }
    events_at_last_block_measure_ = events_;
    block_peak_space_.clear();
    for (uint32_t i = 0; i < processes_.size(); ++i) {
        const ProcessData& p = *processes_[i];
        if (p.ended || !p.blocks) {
            continue;
        }
        for (int device : p.blocks->devices()) {
            block_peak_space_.push_back(
                {i, peak.time_ns, true, p.blocks->measure(device, options_.top)});
        }
    }
}

void Analysis::onFailure(uint32_t process, const format::Event& e) {
    ProcessData& p = *processes_[process];
    if (failures_.size() >= options_.max_listed * processes_.size()) {
        return;
    }
    Failure f;
    f.process = process;
    f.event = e;
    f.error = errorName(e.api, e.result);
    f.live_bytes = p.lifetimes->liveDeviceBytes(e.device);
    f.device_total = e.device_total ? e.device_total : p.deviceTotal(e.device);
    if (measured_failures_ < options_.max_failure_fragmentation && e.device >= 0) {
        ++measured_failures_;
        FragmentationEntry fe;
        fe.moment = Moment::Failure;
        fe.time_ns = e.time_ns;
        fe.live_bytes = f.live_bytes;
        fe.device_total = f.device_total;
        const bool layout = measured_failures_ <= options_.layout_failures;
        fe.data = measureFragmentation(*p.lifetimes, process, e.device, p.granularity(e.device),
                                       options_.top, layout ? options_.layout_entries : 0);
        f.largest_hole = fe.data.largest_hole_bytes;
        failure_fragmentation_.push_back(std::move(fe));
    }
    FailureFacts facts;
    facts.requested = e.size;
    facts.device_total = f.device_total;
    facts.free_known = e.device_total != 0;
    facts.device_free = e.device_free;
    facts.live_bytes = f.live_bytes;
    facts.largest_hole = f.largest_hole.value_or(0);
    f.diagnosis = diagnoseFailure(e, facts);
    failures_.push_back(std::move(f));
}

std::vector<int> Analysis::devicesOf(const ProcessData& p, bool live_only) const {
    std::set<int> devices;
    for (const auto& [address, a] : p.lifetimes->pointers()) {
        if (a.device >= 0 && a.kind != format::Kind::HostPinned) {
            devices.insert(a.device);
        }
    }
    for (const auto& [handle, h] : p.lifetimes->handles()) {
        if (h.device >= 0 && !h.host_located && h.counted()) {
            devices.insert(h.device);
        }
    }
    if (!live_only) {
        for (const auto& [ordinal, d] : p.devices) {
            devices.insert(ordinal);
        }
    }
    return {devices.begin(), devices.end()};
}

void Analysis::measureDevices(uint32_t process, bool live_only, Moment moment, uint64_t time_ns,
                              std::vector<FragmentationEntry>& out, size_t layout_entries) const {
    const ProcessData& p = *processes_[process];
    std::vector<FragmentationRequest> requests;
    for (int device : devicesOf(p, live_only)) {
        requests.push_back({device, p.granularity(device)});
    }
    for (Fragmentation& f :
         measureFragmentation(*p.lifetimes, process, requests, options_.top, layout_entries)) {
        FragmentationEntry fe;
        fe.moment = moment;
        fe.time_ns = time_ns;
        fe.live_bytes = p.lifetimes->liveDeviceBytes(f.device);
        fe.device_total = p.deviceTotal(f.device);
        fe.data = std::move(f);
        out.push_back(std::move(fe));
    }
}

void Analysis::onPeakSnapshot(const PeakPoint& peak) {
    size_t live = 0;
    for (const auto& p : processes_) {
        live += p->lifetimes->walkSize();
    }
    if (live > kCheapLiveSet && (events_ - events_at_last_measure_) * kWalkStepsPerEvent < live) {
        for (auto& fe : peak_fragmentation_) {
            fe.exact = false;
        }
        return;
    }
    events_at_last_measure_ = events_;
    peak_fragmentation_.clear();
    for (uint32_t i = 0; i < processes_.size(); ++i) {
        if (processes_[i]->ended) {
            continue; // its memory ended with it
        }
        measureDevices(i, true, Moment::Peak, peak.time_ns, peak_fragmentation_,
                       options_.layout_entries);
    }
}

void Analysis::endProcess(uint32_t process, const ReadStatus& status) {
    ProcessData& p = *processes_[process];
    p.status = status;
    if (p.ended) {
        return;
    }
    if (status.unknown_tail) {
        p.missing.unknown_tail = true;
        p.lifetimes->onGap(); // what is live at the end may have been freed after
    }
    // The trailer's count (at the end) can exceed the prologue's (read at the start).
    if (status.dropped_events > 0) {
        p.missing.dropped_events = status.dropped_events;
        p.lifetimes->onUnlocatedLoss();
    }
    p.missing.unrecorded_frees = p.lifetimes->counters().implicit_ends;
    const uint64_t end = p.endTime();
    if (p.blocks) {
        p.blocks->releaseAll(end);
    }
    p.lifetimes->releaseAll(end);
    p.phase_tracker->end(end);
    p.ended = true;
}

void Analysis::finish() {
    for (uint32_t i = 0; i < processes_.size(); ++i) {
        if (!processes_[i]->ended) {
            endProcess(i, processes_[i]->status);
        }
    }
    // The end of the analysis: a peak whose live set lasted to the end is measured now.
    accounting_.settle();
    accounting_.stopThread(); // what the report reads is complete from here
    block_accounting_.settle();
    fragmentation_ = peak_fragmentation_;
    fragmentation_.insert(fragmentation_.end(), failure_fragmentation_.begin(),
                          failure_fragmentation_.end());
    for (uint32_t i = 0; i < processes_.size(); ++i) {
        ProcessData& p = *processes_[i];
        measureDevices(i, false, Moment::End, p.endTime(), fragmentation_);
        p.lifetimes->finish();
        if (p.blocks) {
            p.blocks->finish();
        }
    }
}

} // namespace gmt::analyzer
