#include "trace_analysis.h"

#include "trace_reader.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

namespace gmt::analyzer {

void analyzeTraces(const std::vector<std::string>& traces, Analysis& analysis) {
    struct Stream {
        std::unique_ptr<TraceReader> reader;
        std::unique_ptr<Record> next = std::make_unique<Record>();
        bool has = false;
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
    // The order: non-event records first (they define what events refer to), then the
    // earliest event of all processes, so device totals interleave correctly; ties go to
    // the trace named first. A heap makes each choice O(log traces), not O(traces).
    auto key = [&](size_t i) {
        const Record& r = *streams[i].next;
        const bool event = r.tag == format::RecordTag::Event;
        return std::tuple(event, event ? r.event.time_ns : 0, i);
    };
    auto later = [&](size_t a, size_t b) { return key(a) > key(b); };
    std::vector<size_t> heap;
    for (size_t i = 0; i < streams.size(); ++i) {
        Stream& s = streams[i];
        s.has = s.reader->next(*s.next);
        if (s.has) {
            heap.push_back(i);
        } else {
            analysis.endProcess(s.process, s.reader->status());
        }
    }
    std::make_heap(heap.begin(), heap.end(), later);
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), later);
        Stream& s = streams[heap.back()];
        analysis.onRecord(s.process, *s.next);
        s.has = s.reader->next(*s.next);
        if (s.has) {
            std::push_heap(heap.begin(), heap.end(), later);
        } else {
            heap.pop_back();
            analysis.endProcess(s.process, s.reader->status());
        }
    }
    analysis.finish();
}

} // namespace gmt::analyzer
