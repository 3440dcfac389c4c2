#include "analysis/trace_analysis.h"

#include "read/trace_reader.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

namespace gmt::analyzer {

void analyzeTraces(const std::vector<std::string>& traces, Analysis& analysis,
                   const RecordVisitor& before_record) {
    // A stream is read to its end, then waits until its process's end time comes in the
    // merged order (other processes' events may still precede it), then ends.
    enum class State { Reading, Ending, Done };
    struct Stream {
        std::unique_ptr<TraceReader> reader;
        std::unique_ptr<Record> next = std::make_unique<Record>();
        State state = State::Reading;
        uint64_t end_ns = 0;
        uint32_t process = 0;
    };
    // Every trace is read at once, a frame at a time: their read-ahead shares one budget
    // (descriptors are bounded by the DescriptorPool).
    constexpr size_t kReadAheadBudget = 64u << 20;
    const size_t read_ahead =
        std::clamp(kReadAheadBudget / std::max<size_t>(traces.size(), 1),
                   TraceReader::kMinReadAhead, TraceReader::kDefaultReadAhead);
    // Open everything first: a bad file fails the run before any work is done.
    std::vector<Stream> streams(traces.size());
    for (size_t i = 0; i < traces.size(); ++i) {
        streams[i].reader = std::make_unique<TraceReader>(traces[i], read_ahead);
        streams[i].process = analysis.addProcess(traces[i], streams[i].reader->prologue());
    }
    const uint64_t until = analysis.options().until_ns;
    auto stop = [&](Stream& s) {
        s.state = State::Ending;
        s.end_ns = std::min(analysis.processes()[s.process]->endTime(), until);
    };
    auto advance = [&](Stream& s) {
        if (!s.reader->next(*s.next) ||
            (s.next->tag == format::RecordTag::Event && s.next->event.time_ns > until)) {
            stop(s);
        }
    };
    // The order: non-event records first (they define what events refer to), then the
    // earliest event or process end of all processes, so device totals interleave
    // correctly; a process that ends when another allocates ends first; ties go to the
    // trace named first. A heap makes each choice O(log traces), not O(traces).
    auto key = [&](size_t i) {
        const Stream& s = streams[i];
        const bool ends = s.state == State::Ending;
        if (!ends && s.next->tag != format::RecordTag::Event) {
            return std::tuple(false, uint64_t{0}, false, i);
        }
        return std::tuple(true, ends ? s.end_ns : s.next->event.time_ns, !ends, i);
    };
    auto later = [&](size_t a, size_t b) { return key(a) > key(b); };
    std::vector<size_t> heap;
    for (size_t i = 0; i < streams.size(); ++i) {
        advance(streams[i]);
        heap.push_back(i);
    }
    std::make_heap(heap.begin(), heap.end(), later);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        const size_t i = heap.back();
        Stream& s = streams[i];
        if (s.state == State::Ending) {
            analysis.endProcess(s.process, s.reader->status());
            s.state = State::Done;
            heap.pop_back();
            continue;
        }
        // A run of this stream's records while it stays first (every record of a single
        // trace): no heap operation per record.
        do {
            if (before_record) {
                before_record(s.process, *s.next);
            }
            analysis.onRecord(s.process, *s.next);
            if (heap.size() == 1 && !before_record) {
                // Alone (every record of a single trace): its runs of events applied in
                // place from the reader's batch rather than copied into s.next one at a
                // time. The reader and the process held in locals: the calls inside
                // onPlainEvents could change `s` for all the compiler knows, and it would
                // load them again.
                TraceReader& reader = *s.reader;
                const uint32_t process = s.process;
                for (auto run = reader.pendingEvents(); !run.empty();
                     run = reader.pendingEvents()) {
                    const size_t applied = analysis.onPlainEvents(process, run, until);
                    if (applied < run.size()) {
                        reader.takeEvents(applied + 1); // the one after `until` was read
                        stop(s);
                        break;
                    }
                    reader.takeEvents(applied);
                }
            }
            if (s.state == State::Reading) {
                advance(s);
            }
        } while (s.state == State::Reading && (heap.size() == 1 || later(heap.front(), i)));
        std::push_heap(heap.begin(), heap.end(), later);
    }
    analysis.finish();
}

} // namespace gmt::analyzer
