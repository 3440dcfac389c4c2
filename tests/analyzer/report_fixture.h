// Shared by the analyzer tests: build a trace, analyse it, look at the report.
#pragma once

#include "record_json.h"
#include "report.h"
#include "support/json_schema.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"
#include "trace_analysis.h"
#include "trace_report.h"

#include <fstream>

namespace gmt::test {

inline constexpr uint64_t MiB = 1ull << 20;
inline constexpr uint64_t KiB = 1ull << 10;

// A builder with a header and device 0 (and 1) already in it.
inline TraceBuilder standardTrace(int devices = 1) {
    TraceBuilder b;
    b.header();
    for (int d = 0; d < devices; ++d) {
        b.device(TraceBuilder::defaultDevice(d));
    }
    b.stack(1, {0x401000, 0x402000});
    b.stack(2, {0x401100, 0x402000});
    b.stack(3, {0x401200, 0x402000});
    return b;
}

// The typed report of traces, as `gpumemtrace report` makes it.
inline analyzer::Report reportOf(const std::vector<std::string>& traces,
                                 const analyzer::ReportOptions& options) {
    return analyzer::reportOfTraces(traces, options);
}

inline analyzer::Report report(TraceBuilder& b, analyzer::ReportOptions options = {}) {
    TempDir dir;
    std::string path = b.write(dir.file("t.gmtrace"));
    options.symbols = false;
    return reportOf({path}, options);
}

// docs/report.schema.json: the contract every JSON report meets.
inline SchemaValidator& reportSchema() {
    static SchemaValidator v = [] {
        std::ifstream f(GMT_REPORT_SCHEMA);
        return SchemaValidator(nlohmann::json::parse(f));
    }();
    return v;
}

inline const analyzer::KindReport& kindOf(const analyzer::Report& r, format::Kind kind) {
    for (const auto& k : r.kinds) {
        if (k.kind == kind) {
            return k;
        }
    }
    throw std::logic_error("kind not in the report");
}

} // namespace gmt::test
