#include "trace_analysis.h"

#include "trace_reader.h"

#include <memory>

namespace gmt::analyzer {

void analyzeTraces(const std::vector<std::string>& traces, Analysis& analysis) {
    struct Stream {
        std::unique_ptr<TraceReader> reader;
        std::unique_ptr<Record> next = std::make_unique<Record>();
        bool has = false;
        uint32_t process = 0;
    };
    // Open everything first: a bad file fails the run before any work is done.
    std::vector<Stream> streams(traces.size());
    for (size_t i = 0; i < traces.size(); ++i) {
        streams[i].reader = std::make_unique<TraceReader>(traces[i]);
        streams[i].process = analysis.addProcess(traces[i], streams[i].reader->prologue());
    }
    for (Stream& s : streams) {
        s.has = s.reader->next(*s.next);
        if (!s.has) {
            analysis.endProcess(s.process, s.reader->status());
        }
    }
    for (;;) {
        // Non-event records go first (they define what events refer to); then the
        // earliest event of all processes, so device totals interleave correctly.
        Stream* pick = nullptr;
        for (Stream& s : streams) {
            if (!s.has) {
                continue;
            }
            if (s.next->tag != format::RecordTag::Event) {
                pick = &s;
                break;
            }
            if (!pick || s.next->event.time_ns < pick->next->event.time_ns) {
                pick = &s;
            }
        }
        if (!pick) {
            break;
        }
        analysis.onRecord(pick->process, *pick->next);
        pick->has = pick->reader->next(*pick->next);
        if (!pick->has) {
            analysis.endProcess(pick->process, pick->reader->status());
        }
    }
    analysis.finish();
}

} // namespace gmt::analyzer
