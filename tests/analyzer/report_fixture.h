// Shared by the analyzer tests: build a trace, analyse it, look at the report.
#pragma once

#include "analysis/trace_analysis.h"
#include "model/report.h"
#include "read/record_json.h"
#include "report/trace_report.h"
#include "support/json_schema.h"
#include "support/temp_dir.h"
#include "support/trace_builder.h"

#include <fstream>

namespace gmt::test {

inline constexpr uint64_t MiB = 1ull << 20;
inline constexpr uint64_t KiB = 1ull << 10;

// A builder with a header and device 0 (and 1) already in it.
inline TraceBuilder
standardTrace(int devices = 1, const format::HeaderInfo& header = TraceBuilder::defaultHeader()) {
    TraceBuilder b;
    b.header(header);
    for (int d = 0; d < devices; ++d) {
        b.device(TraceBuilder::defaultDevice(d));
    }
    b.stack(1, {0x401000, 0x402000});
    b.stack(2, {0x401100, 0x402000});
    b.stack(3, {0x401200, 0x402000});
    return b;
}

// The worked example of docs/analysis.md ("Fragmentation"), without its trailer.
// Device 0, 2 MiB granules, base B = kExampleBase:
//   A [B+0,      B+1M)    stack 1
//   B [B+1.5M,   B+1.75M) stack 2
//   C [B+4M,     B+4.5M)  stack 3
//   D [B+6M,     B+9M)    stack 1
// and a VMM reservation R = kExampleReservation (8 MiB) with 2 MiB handles mapped at R+0
// and R+4M.
inline constexpr uint64_t kExampleBase = 0x7f0000000000;
inline constexpr uint64_t kExampleReservation = 0x7f1000000000;

inline TraceBuilder fragmentationExample() {
    using format::Api;
    using format::Kind;
    using format::Op;
    constexpr uint64_t B = kExampleBase;
    constexpr uint64_t R = kExampleReservation;
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 1 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(2, B + 1536 * KiB, 256 * KiB, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::alloc(3, B + 4 * MiB, 512 * KiB, Api::cudaMalloc, Kind::Device, 3));
    b.event(Ev::alloc(4, B + 6 * MiB, 3 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::op(5, Op::VmmReserve, Api::cuMemAddressReserve, R, 8 * MiB));
    b.event(Ev::op(6, Op::VmmCreate, Api::cuMemCreate, 0, 2 * MiB, 0xa1));
    b.event(Ev::op(7, Op::VmmCreate, Api::cuMemCreate, 0, 2 * MiB, 0xa2));
    b.event(Ev::op(8, Op::VmmMap, Api::cuMemMap, R, 2 * MiB, 0xa1));
    b.event(Ev::op(9, Op::VmmMap, Api::cuMemMap, R + 4 * MiB, 2 * MiB, 0xa2));
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
