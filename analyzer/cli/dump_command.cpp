// `gpumemtrace dump TRACE`: the trace as JSON lines, one record per line, in file order
// (log frames, then records recovered from the ring, marked "recovered": true).
#include "cli/commands.h"

#include "base/json_sink.h"
#include "base/output_file.h"
#include "base/text_safety.h"
#include "read/record_json.h"
#include "read/trace_error.h"
#include "read/trace_reader.h"

#include <iostream>
#include <memory>
#include <string>

namespace gmt::cli {

namespace {
// Bytes of lines written to standard output at once: few writes, and `dump | head` still
// sees its first lines after this much work.
constexpr size_t kDumpPiece = 64 * 1024;
} // namespace

void addDumpCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("dump", "Print a trace as JSON lines");
    auto trace = std::make_shared<std::string>();
    cmd->add_option("trace", *trace, "Trace file (.gmtrace)")->required()->type_name("TRACE");
    cmd->callback([trace, &exit_code] {
        using namespace gmt::analyzer;
        // The lines gather in `text` and go out a piece at a time: a trace of millions
        // of events is written without a Json value made for any record.
        std::string text;
        JsonTextSink sink(text, -1);
        auto write = [&text] {
            std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
            text.clear();
            checkStdout(); // no point reading on when nothing reaches the reader
        };
        try {
            TraceReader reader(*trace);
            auto record = std::make_unique<Record>();
            while (reader.next(*record)) {
                writeRecordJson(*record, reader.prologue(), sink);
                text += '\n';
                if (text.size() >= kDumpPiece) {
                    write();
                }
            }
            write();
            finishStdout();
            const ReadStatus& st = reader.status();
            if (st.stopped_early) {
                std::cerr << "gpumemtrace: " << printable(*trace) << ": offset "
                          << st.log_end_offset << ": " << printable(st.stop_reason) << " ("
                          << st.ring_records << " records recovered from the ring after it)\n";
                exit_code = kExitNotOk;
            } else if (!st.complete) {
                std::cerr << "gpumemtrace: " << printable(*trace) << ": offset "
                          << st.log_end_offset << ": incomplete trace: " << st.incompleteReason()
                          << " (" << st.ring_records << " records recovered from the ring)\n";
                exit_code = kExitNotOk;
            }
        } catch (const TraceError& e) {
            write(); // the records before the damage are the trace's
            std::cout.flush();
            std::cerr << "gpumemtrace: " << printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
