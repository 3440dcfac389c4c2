#include "export/ndjson_writer.h"

#include "export/report_columns.h"
#include "report/stack_symbolizer.h"
#include "views/frame_text.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

std::string path(const std::string& directory, const char* name) {
    return directory + "/" + name;
}

// The columns of the tables that stream from the trace, with their types, as schema.sql
// declares them: DuckDB then reads an empty table too (it cannot guess the columns of an
// empty file) and addresses as unsigned.
struct TableSchema {
    const char* name;
    std::string columns;
};
constexpr const char* kSite = "'process': 'UINTEGER', 'pid': 'UBIGINT', 'rank': 'BIGINT', ";
constexpr const char* kEventColumns =
    "'seq': 'UBIGINT', 'tid': 'UBIGINT', 'time_ns': 'UBIGINT', 'event': 'VARCHAR', "
    "'api': 'VARCHAR', 'kind': 'VARCHAR', 'device': 'INTEGER', 'address': 'UBIGINT', "
    "'size': 'UBIGINT', 'handle': 'UBIGINT', 'stream': 'UBIGINT', 'result': 'INTEGER', "
    "'stack_id': 'UINTEGER'";
constexpr const char* kAllocationColumns =
    "'address': 'UBIGINT', 'kind': 'VARCHAR', 'api': 'VARCHAR', 'device': 'INTEGER', "
    "'size': 'UBIGINT', 'device_resident': 'BOOLEAN', 'stack_id': 'UINTEGER', 'tid': 'UBIGINT', "
    "'begin_seq': 'UBIGINT', 'begin_ns': 'UBIGINT', 'end_seq': 'UBIGINT', 'end_ns': 'UBIGINT', "
    "'end_reason': 'VARCHAR', 'end_stack_id': 'UINTEGER'";
constexpr const char* kStackColumns =
    "'stack_id': 'UINTEGER', 'frame': 'UINTEGER', 'function': 'VARCHAR', 'file': 'VARCHAR', "
    "'line': 'INTEGER', 'module': 'VARCHAR', 'module_offset': 'UBIGINT', 'address': 'UBIGINT', "
    "'language': 'VARCHAR', 'inlined': 'BOOLEAN', 'hidden': 'BOOLEAN'";

// The tables that copy the report: their columns are report members (export/report_columns.h).
constexpr std::array<ReportColumn, 13> kProcessColumns{{{"ppid"},
                                                        {"command"},
                                                        {"executable"},
                                                        {"host"},
                                                        {"trace_file"},
                                                        {"complete"},
                                                        {"start_mono_ns"},
                                                        {"end_mono_ns"},
                                                        {"start_wall_ns"},
                                                        {"events"},
                                                        {"allocations"},
                                                        {"frees"},
                                                        {"leaked_bytes"}}};
constexpr std::array<ReportColumn, 6> kDeviceColumns{{{"ordinal", "device"},
                                                      {"name"},
                                                      {"total_bytes"},
                                                      {"peak_bytes"},
                                                      {"peak_time_ns"},
                                                      {"leaked_bytes"}}};
constexpr std::array<ReportColumn, 6> kLeakColumns{
    {{"stack_id"}, {"kind"}, {"api"}, {"bytes"}, {"allocations"}, {"released_by_teardown"}}};
constexpr std::array<ReportColumn, 3> kPeakColumns{{{"stack_id"}, {"bytes"}, {"allocations"}}};
constexpr std::array<ReportColumn, 1> kPeakTimeColumns{{{"time_ns", "peak_time_ns"}}};
static_assert(knownColumns<ProcessReport>(kProcessColumns));
static_assert(knownColumns<DeviceReport>(kDeviceColumns));
static_assert(knownColumns<LeakSite>(kLeakColumns));
static_assert(knownColumns<PeakSite>(kPeakColumns));
static_assert(knownColumns<PeakReport>(kPeakTimeColumns));
// Computed from a site's stack, not a member.
constexpr const char* kSiteLabelColumn = "'site': 'VARCHAR'";

void writeSchema(const std::string& directory) {
    const TableSchema tables[] = {
        {"events", kEventColumns},
        {"allocations", kAllocationColumns},
        {"stacks", kStackColumns},
        {"processes", sqlColumns<ProcessReport>(kProcessColumns)},
        {"devices", sqlColumns<DeviceReport>(kDeviceColumns)},
        {"leaks", sqlColumns<LeakSite>(kLeakColumns) + kSiteLabelColumn},
        {"peak", sqlColumns<PeakSite>(kPeakColumns) + sqlColumns<PeakReport>(kPeakTimeColumns) +
                     kSiteLabelColumn},
    };
    OutputFile out(path(directory, "schema.sql"));
    out.write("-- The tables of `gpumemtrace export --format ndjson` as DuckDB views with their\n"
              "-- column types. In DuckDB, from this directory: .read schema.sql\n");
    for (const TableSchema& t : tables) {
        const bool per_process = std::string_view(t.name) != "devices";
        std::string columns = t.columns;
        if (columns.ends_with(", ")) {
            columns.resize(columns.size() - 2);
        }
        out.write(std::string("CREATE OR REPLACE VIEW ") + t.name +
                  " AS SELECT * FROM read_ndjson('" + t.name + ".ndjson', columns = {" +
                  (per_process ? kSite : "") + columns + "});\n");
    }
    out.close();
}

} // namespace

NdjsonWriter::NdjsonWriter(const Analysis& analysis, const std::string& directory,
                           const FrameSource& frames)
    : analysis_(analysis), directory_(directory), frames_(frames),
      events_(path(directory, "events.ndjson")),
      allocations_(path(directory, "allocations.ndjson")) {}

JsonLine& NdjsonWriter::row(uint32_t process) {
    line_.clear();
    const ProcessData& p = *analysis_.processes()[process];
    line_.num("process", process).num("pid", p.header ? p.header->pid : 0);
    if (p.header && p.header->rank >= 0) {
        line_.num("rank", p.header->rank);
    } else {
        line_.null("rank");
    }
    return line_;
}

void NdjsonWriter::record(uint32_t process, const Record& r) {
    if (r.tag != format::RecordTag::Event) {
        return;
    }
    const format::Event& e = r.event;
    seq_ = next_seq_++;
    row(process)
        .num("seq", seq_)
        .num("tid", e.tid)
        .num("time_ns", e.time_ns)
        .name("event", format::opName(e.op))
        .name("api", format::eventApiName(e.op, e.api))
        .name("kind", format::kindName(e.kind))
        .num("device", e.device)
        .num("address", e.address)
        .num("size", e.size)
        .num("handle", e.handle)
        .num("stream", e.stream)
        .num("result", e.result)
        .num("stack_id", e.stack_id);
    events_.write(line_.text());
}

void NdjsonWriter::began(const LifetimeInfo& l, const format::Event& e) {
    const size_t at = l.charge.process * kAddressSpaces + addressSpace(l.charge.kind);
    if (begun_.size() <= at) {
        begun_.resize(at + 1);
    }
    *begun_[at].tryEmplace(l.address).first = Begun{seq_, e.tid};
}

void NdjsonWriter::ended(const LifetimeInfo& l, uint64_t time_ns, LifetimeEnd how,
                         const format::Event* cause) {
    const size_t at = l.charge.process * kAddressSpaces + addressSpace(l.charge.kind);
    Begun begun{0, 0};
    if (at < begun_.size()) {
        if (const Begun* found = begun_[at].find(l.address)) {
            begun = *found;
            begun_[at].erase(l.address);
        }
    }
    // A process ends between events: its end comes before the next event in the order.
    const uint64_t end_seq = how == LifetimeEnd::ProcessEnd ? next_seq_ : seq_;
    row(l.charge.process)
        .num("address", l.address)
        .name("kind", format::kindName(l.charge.kind))
        .name("api", format::apiName(l.api))
        .num("device", l.charge.device)
        .num("size", l.charge.bytes)
        .boolean("device_resident", l.charge.resident)
        .num("stack_id", l.charge.stack)
        .num("tid", begun.tid)
        .num("begin_seq", begun.seq)
        .num("begin_ns", l.begin_ns)
        .num("end_seq", end_seq)
        .num("end_ns", time_ns)
        .name("end_reason", lifetimeEndName(how))
        .num("end_stack_id", cause ? cause->stack_id : 0);
    allocations_.write(line_.text());
}

std::optional<uint32_t> NdjsonWriter::processOf(uint64_t pid) const {
    std::optional<uint32_t> found;
    const auto& processes = analysis_.processes();
    for (uint32_t i = 0; i < processes.size(); ++i) {
        if (processes[i]->header && processes[i]->header->pid == pid) {
            if (found) {
                return std::nullopt; // two processes with this pid (two hosts): unknown
            }
            found = i;
        }
    }
    return found;
}

JsonLine& NdjsonWriter::siteRow(uint64_t pid) {
    const std::optional<uint32_t> process = processOf(pid);
    if (process) {
        return row(*process);
    }
    line_.clear();
    return line_.null("process").num("pid", pid).null("rank");
}

void NdjsonWriter::writeStacks() {
    OutputFile out(path(directory_, "stacks.ndjson"));
    const auto& processes = analysis_.processes();
    for (uint32_t i = 0; i < processes.size(); ++i) {
        const ProcessData& p = *processes[i];
        StackSymbolizer symbolizer(p, frames_.symbols, frames_.user_code);
        std::vector<uint32_t> ids;
        ids.reserve(p.stacks.size());
        for (const auto& [id, addresses] : p.stacks) {
            ids.push_back(id);
        }
        std::sort(ids.begin(), ids.end());
        for (uint32_t id : ids) {
            const Stack frames = symbolizer.stack(id);
            for (size_t f = 0; f < frames.size(); ++f) {
                const Frame& frame = frames[f];
                row(i).num("stack_id", id).num("frame", f).str("function", frame.function);
                line_.str("file", frame.file).num("line", frame.line).str("module", frame.module);
                if (frame.offset) {
                    line_.num("module_offset", *frame.offset);
                } else {
                    line_.null("module_offset");
                }
                line_.num("address", frame.address)
                    .name("language", frame.language == FrameLanguage::Python ? "python" : "native")
                    .boolean("inlined", frame.inlined)
                    .boolean("hidden", hiddenFrame(frame));
                out.write(line_.text());
            }
        }
    }
    out.close();
}

void NdjsonWriter::finish(const Report* report) {
    events_.close();
    allocations_.close();
    writeStacks();

    OutputFile processes(path(directory_, "processes.ndjson"));
    for (uint32_t i = 0; i < report->processes.size(); ++i) {
        writeColumns(row(i), report->processes[i], kProcessColumns);
        processes.write(line_.text());
    }
    processes.close();

    OutputFile devices(path(directory_, "devices.ndjson"));
    for (const DeviceReport& d : report->devices) {
        line_.clear();
        writeColumns(line_, d, kDeviceColumns);
        devices.write(line_.text());
    }
    devices.close();

    OutputFile leaks(path(directory_, "leaks.ndjson"));
    for (const LeakSite& s : report->leaks) {
        writeColumns(siteRow(s.pid), s, kLeakColumns);
        line_.str("site", siteLabel(s.stack));
        leaks.write(line_.text());
    }
    leaks.close();

    OutputFile peak(path(directory_, "peak.ndjson"));
    for (const PeakSite& s : report->peak.top_sites) {
        writeColumns(siteRow(s.pid), s, kPeakColumns);
        writeColumns(line_, report->peak, kPeakTimeColumns);
        line_.str("site", siteLabel(s.stack));
        peak.write(line_.text());
    }
    peak.close();
    writeSchema(directory_);
}

} // namespace gmt::analyzer
