#include "trace_analysis.h"

#include "trace_reader.h"

#include <memory>

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
    // Open everything first: a bad file fails the run before any work is done.
    std::vector<Stream> streams(traces.size());
    for (size_t i = 0; i < traces.size(); ++i) {
        streams[i].reader = std::make_unique<TraceReader>(traces[i]);
        streams[i].process = analysis.addProcess(traces[i], streams[i].reader->prologue());
    }
    auto advance = [&](Stream& s) {
        if (!s.reader->next(*s.next)) {
            s.state = State::Ending;
            s.end_ns = analysis.processes()[s.process]->endTime();
        }
    };
    for (Stream& s : streams) {
        advance(s);
    }
    for (;;) {
        // Non-event records go first (they define what events refer to); then the
        // earliest event or process end of all processes, so device totals interleave
        // correctly. A process that ends when another allocates ends first.
        Stream* pick = nullptr;
        uint64_t pick_time = 0;
        bool pick_ends = false;
        for (Stream& s : streams) {
            if (s.state == State::Done) {
                continue;
            }
            const bool ends = s.state == State::Ending;
            if (!ends && s.next->tag != format::RecordTag::Event) {
                pick = &s;
                pick_ends = false;
                break;
            }
            const uint64_t t = ends ? s.end_ns : s.next->event.time_ns;
            if (!pick || t < pick_time || (t == pick_time && ends && !pick_ends)) {
                pick = &s;
                pick_time = t;
                pick_ends = ends;
            }
        }
        if (!pick) {
            break;
        }
        if (pick_ends) {
            analysis.endProcess(pick->process, pick->reader->status());
            pick->state = State::Done;
            continue;
        }
        if (before_record) {
            before_record(pick->process, *pick->next);
        }
        analysis.onRecord(pick->process, *pick->next);
        advance(*pick);
    }
    analysis.finish();
}

} // namespace gmt::analyzer
