// `gpumemtrace dump TRACE`: the trace as JSON lines, one record per line, in file order
// (log frames, then records recovered from the ring, marked "recovered": true).
#include "cli/commands.h"

#include "base/output_file.h"
#include "base/text_safety.h"
#include "read/record_json.h"
#include "read/trace_error.h"
#include "read/trace_reader.h"

#include <iostream>
#include <memory>

namespace gmt::cli {

void addDumpCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("dump", "Print a trace as JSON lines");
    auto trace = std::make_shared<std::string>();
    cmd->add_option("trace", *trace, "Trace file (.gmtrace)")->required()->type_name("TRACE");
    cmd->callback([trace, &exit_code] {
        using namespace gmt::analyzer;
        try {
            TraceReader reader(*trace);
            auto record = std::make_unique<Record>();
            while (reader.next(*record)) {
                std::cout << jsonText(recordJson(*record, reader.prologue())) << '\n';
                checkStdout(); // no point reading on when nothing reaches the reader
            }
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
            std::cout.flush();
            std::cerr << "gpumemtrace: " << printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
