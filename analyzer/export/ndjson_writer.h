// `export --format ndjson`: tables as newline-delimited JSON, one file each in a directory,
// for SQL engines that read it natively (DuckDB, Spark, Trino). docs/export.md lists the
// columns and the queries.
//
//   events.ndjson       every traced call, in the order the analysis took them (seq)
//   allocations.ndjson  every counted allocation's lifetime: made, ended (or not) and how
//   stacks.ndjson       one row per frame of every stack the processes recorded
//   processes.ndjson    the traced processes
//   devices.ndjson      the GPUs: peak and leaked bytes as the report has them
//   leaks.ndjson        the report's leak sites, all of them
//   peak.ndjson         the report's sites at the peak, all of them
//
// events and allocations are written while the traces stream; stacks, processes, devices,
// leaks and peak come from the analysis and the report at the end. Memory: the live
// allocations and the symbolized stacks of one process at a time.
#pragma once

#include "analysis/analysis.h"
#include "base/flat_map.h"
#include "base/output_file.h"
#include "export/export_writer.h"
#include "export/json_text.h"
#include "export/stack_cache.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

class NdjsonWriter final : public ExportWriter {
  public:
    NdjsonWriter(const Analysis& analysis, const std::string& directory, const FrameSource& frames);

    void record(uint32_t process, const Record& record) override;
    void began(const LifetimeInfo& lifetime, const format::Event& e) override;
    void ended(const LifetimeInfo& lifetime, uint64_t time_ns, LifetimeEnd how,
               const format::Event* cause) override;
    bool needsReport() const override { return true; }
    void finish(const Report* report) override;

  private:
    struct Begun {
        uint64_t seq;
        uint32_t tid;
    };
    JsonLine& row(uint32_t process);
    // The report's sites name their process by pid only.
    std::optional<uint32_t> processOf(uint64_t pid) const;
    JsonLine& siteRow(uint64_t pid);
    void writeStacks();

    const Analysis& analysis_;
    std::string directory_;
    FrameSource frames_;
    OutputFile events_;
    OutputFile allocations_;
    JsonLine line_;
    uint64_t next_seq_ = 0; // the seq of the next event
    uint64_t seq_ = 0;      // of the event being analysed
    // (process, space) -> address -> when it began; the live allocations only.
    std::vector<FlatMap<Begun>> begun_;
};

} // namespace gmt::analyzer
