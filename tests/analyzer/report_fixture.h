// Shared by the analyzer tests: build a trace, analyse it, look at the report.
#pragma once

#include "record_json.h"
#include "report_builder.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

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

inline analyzer::Json report(TraceBuilder& b, analyzer::ReportOptions options = {}) {
    TempDir dir;
    std::string path = b.write(dir.file("t.gmtrace"));
    options.symbols = false;
    return analyzer::buildReport({path}, options);
}

} // namespace gmt::test
