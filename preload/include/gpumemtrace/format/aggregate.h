// Aggregated traces (GPUMEMTRACE_MODE=aggregate): what the recorder keeps instead of every
// event, and where. docs/trace-format.md, "Aggregated traces".
//
//   0          4096            ring end         ring end + R       ring end + 2R
//   +----------+---------------+----------------+------------------+--------------------+
//   | prologue | ring          | checkpoint A   | checkpoint B     | log (definitions)  |
//   +----------+---------------+----------------+------------------+--------------------+
//
// The prologue's flags carry kPrologueAggregated, and its log_offset lies 2R past the ring
// (R = kCheckpointAlign multiple): a reader that does not know aggregated traces rejects
// the file (its log offset does not match the plain layout) rather than reading a part of
// it as the whole. The log holds the records that define things (header, devices, modules,
// stacks, Python code, caching allocators); the events and phases that matter, the trailer
// and the counts of what was folded are in the checkpoints. The writer writes checkpoints
// alternately into A and B, each complete with a sequence number and a checksum, so a kill
// in the middle of one leaves the other readable. A reader takes the valid checkpoint with
// the highest sequence, then the committed ring slots at or after its end_seq.
#pragma once

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/checksum.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gmt::format {

// Prologue flags bit 1: the trace is aggregated (layout above).
inline constexpr uint32_t kPrologueAggregated = 1u << 1;

inline constexpr uint32_t kCheckpointMagic = 0x50434d47; // "GMCP" little-endian
// Each checkpoint region is a multiple of this, and at most kMaxCheckpointRegion.
inline constexpr uint64_t kCheckpointAlign = 4096;
inline constexpr uint64_t kMaxCheckpointRegion = 1ull << 31;

// The start of a checkpoint region. The payload follows it: records framed as in a log
// frame (tag, varint length, body), events delta-coded from the default Event at the start
// of the payload. In order: one AggregateSummary, the SiteTotals, then the kept events and
// phases in their order of recording, then (the last checkpoint of a finished trace) the
// Trailer.
struct CheckpointHeader {
    uint32_t magic;    // kCheckpointMagic
    uint32_t checksum; // crc32c(sequence .. end of payload)
    uint64_t sequence; // 1, 2, ...: the newest valid one counts
    uint64_t end_seq;  // ring position just after the last slot it covers
    uint64_t payload_size;
    uint32_t record_count;
    uint32_t reserved;
};
static_assert(sizeof(CheckpointHeader) == 40);

inline uint32_t checkpointChecksum(const CheckpointHeader& h, const uint8_t* payload) {
    uint32_t crc =
        crc32c(&h.sequence, sizeof(CheckpointHeader) - offsetof(CheckpointHeader, sequence));
    return crc32c(payload, h.payload_size, crc);
}

// Record tag 10, AggregateSummary: what the checkpoint stands for. Body, varints:
// events (every event the writer took from the ring), folded_allocations, folded_bytes,
// folded_frees (allocations freed while not alive at a peak, a phase mark or a kept
// failure: only counted, in SiteTotals), kept_events, folded_errors (error events past
// kMaxKeptErrors: counted only), folded_phases (phase records past kMaxKeptPhases),
// budget (bytes of one checkpoint region), over_budget (events the last checkpoint could
// not hold: its leaks and peak are then not exact), sequence (the checkpoint's); appended:
// folded_estimated_blocks (of the folded allocations, a caching allocator's blocks whose
// size the recorder could only estimate: the analysis counts them with its estimates).
// The folded allocations and bytes include a caching allocator's blocks (their SiteTotals
// have kind Block: bytes are the blocks' sizes as rebuilt, format/allocator_rules.h).
struct AggregateSummary {
    uint64_t events = 0;
    uint64_t folded_allocations = 0;
    uint64_t folded_bytes = 0;
    uint64_t folded_frees = 0;
    uint64_t kept_events = 0;
    uint64_t folded_errors = 0;
    uint64_t folded_phases = 0;
    uint64_t budget = 0;
    uint64_t over_budget = 0;
    uint64_t sequence = 0;
    uint64_t folded_estimated_blocks = 0; // appended: absent (0) before blocks were folded
};

// Record tag 11, SiteTotals: the folded allocations of one site. Body: varint stack,
// svarint device, varint kind, varint allocations, varint bytes (asked for), varint
// largest (the largest of them).
struct SiteTotals {
    uint32_t stack = 0;
    int32_t device = -1;
    uint8_t kind = 0;
    uint64_t allocations = 0;
    uint64_t bytes = 0;
    uint64_t largest = 0;
};

// Record tag 12, PhaseTotals: the folded allocations made and the folded frees done since
// the Phase record before it (placed just before the next Phase record, or at the end of
// the events), which the analysis counts in the phases current there. Body: varint
// allocations, varint bytes, varint frees.
struct PhaseTotals {
    uint64_t allocations = 0;
    uint64_t bytes = 0;
    uint64_t frees = 0;
};

inline void encodePhaseTotals(ByteWriter& w, const PhaseTotals& t) {
    w.varint(t.allocations);
    w.varint(t.bytes);
    w.varint(t.frees);
}

inline bool decodePhaseTotals(ByteReader& r, PhaseTotals& t) {
    t.allocations = r.varint();
    t.bytes = r.varint();
    t.frees = r.varint();
    return r.ok();
}

// Record tag 14, FoldedPeak: the live bytes the folded allocations held at the moment of
// most live bytes (the process's device-resident total) in the stretch since the Phase
// record before it, which the kept events alone do not replay. It lies just after the
// event of that moment (written only when they held some); the analysis counts the
// process's live bytes then as what it replayed plus `bytes`, in the phases open there.
// Body: varint after_ns (the moment's event's time after the Phase record's before it: a
// few bytes, where a time takes nine), varint bytes. Absent in traces written before phase
// marks and stretch peaks stopped keeping what was live at them.
struct FoldedPeak {
    uint64_t after_ns = 0;
    uint64_t bytes = 0;
};

inline void encodeFoldedPeak(ByteWriter& w, const FoldedPeak& p) {
    w.varint(p.after_ns);
    w.varint(p.bytes);
}

inline bool decodeFoldedPeak(ByteReader& r, FoldedPeak& p) {
    p.after_ns = r.varint();
    p.bytes = r.varint();
    return r.ok();
}

// Record tag 15, FoldedMark: how what the folded allocations held at the Phase record just
// after it differs from what they held at the Phase record before (the first: from
// nothing), as changes only, so that a program whose folded live set is the same at every
// mark (a server marking each request) writes none. Written when something changed. Body:
// svarint level (the change in their device-resident live bytes), then per changed stack,
// until the body ends: varint stack, svarint bytes (the change in the live bytes of that
// stack's folded allocations and blocks: what growth compares at iteration boundaries).
// The analysis adds the running sums to what it replayed at every Phase record. Absent in
// traces written before phase marks stopped keeping what was live at them.
struct FoldedSiteChange {
    uint32_t stack = 0;
    int64_t bytes = 0;
};
struct FoldedMark {
    int64_t level = 0;
    std::vector<FoldedSiteChange> sites;
};

inline void encodeFoldedMark(ByteWriter& w, const FoldedMark& m) {
    w.svarint(m.level);
    for (const FoldedSiteChange& c : m.sites) {
        w.varint(c.stack);
        w.svarint(c.bytes);
    }
}

// Entries are read while the body lasts (each takes at least two bytes): never more than
// the body holds.
inline bool decodeFoldedMark(ByteReader& r, FoldedMark& m) {
    m.level = r.svarint();
    m.sites.clear();
    while (r.ok() && r.remaining() > 0) {
        FoldedSiteChange c;
        c.stack = static_cast<uint32_t>(r.varint());
        c.bytes = r.svarint();
        m.sites.push_back(c);
    }
    return r.ok();
}

// Error events (failed calls, frees of unknown addresses) kept whole; the rest are counted.
inline constexpr uint64_t kMaxKeptErrors = 10000;
// Phase records kept whole; the rest are counted (growth then stops at the last one kept).
inline constexpr uint64_t kMaxKeptPhases = 100000;

inline void encodeAggregateSummary(ByteWriter& w, const AggregateSummary& s) {
    w.varint(s.events);
    w.varint(s.folded_allocations);
    w.varint(s.folded_bytes);
    w.varint(s.folded_frees);
    w.varint(s.kept_events);
    w.varint(s.folded_errors);
    w.varint(s.folded_phases);
    w.varint(s.budget);
    w.varint(s.over_budget);
    w.varint(s.sequence);
    w.varint(s.folded_estimated_blocks);
}

inline bool decodeAggregateSummary(ByteReader& r, AggregateSummary& s) {
    s.events = r.varint();
    s.folded_allocations = r.varint();
    s.folded_bytes = r.varint();
    s.folded_frees = r.varint();
    s.kept_events = r.varint();
    s.folded_errors = r.varint();
    s.folded_phases = r.varint();
    s.budget = r.varint();
    s.over_budget = r.varint();
    s.sequence = r.varint();
    if (r.ok() && r.remaining() > 0) {
        s.folded_estimated_blocks = r.varint();
    }
    return r.ok();
}

inline void encodeSiteTotals(ByteWriter& w, const SiteTotals& t) {
    w.varint(t.stack);
    w.svarint(t.device);
    w.varint(t.kind);
    w.varint(t.allocations);
    w.varint(t.bytes);
    w.varint(t.largest);
}

inline bool decodeSiteTotals(ByteReader& r, SiteTotals& t) {
    t.stack = static_cast<uint32_t>(r.varint());
    t.device = static_cast<int32_t>(r.svarint());
    t.kind = static_cast<uint8_t>(r.varint());
    t.allocations = r.varint();
    t.bytes = r.varint();
    t.largest = r.varint();
    return r.ok();
}

} // namespace gmt::format
