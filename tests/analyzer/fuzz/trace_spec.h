// The structure-aware fuzzers' view of a trace: decoded records (events with every field
// as a plain value) in log order with frame boundaries, plus raw ring slots. The fuzzers
// mutate this model, not bytes, and the builder turns it into a file with valid frame
// checksums and correct delta coding, so every mutation reaches the analysis instead of
// stopping at a checksum. Damage (a bad checksum, a torn end, a wrong record count) is
// part of the model too, so those paths are reached on purpose.
//
// A spec is also what the fuzzers store in their corpus (tests/analyzer/fuzz/corpus):
//   "GSPEC1" u8 ring_slots_log2 u64 dropped_events, then items until the end:
//   'E' + 104 bytes            an event (format::Event, raw)
//   'R' + u8 tag + u16 n + n   a non-event record: tag and body
//   'F' + u8 damage + u16 skip a frame ends here (damage: FrameDamage; skip: positions the
//                              frame's end_seq claims beyond its records)
//   'S' + u64 position + u8 committed + 128-byte slot   a ring slot
// Parsing is lenient: whatever follows the first malformed item is ignored.
#pragma once

#include <gpumemtrace/trace_format.h>

#include <cstdint>
#include <random>
#include <vector>

namespace gmt::fuzz {

enum class FrameDamage : uint8_t {
    None = 0,
    Checksum = 1,    // one payload byte flipped after the checksum was computed
    RecordCount = 2, // record_count one more than the records
    TornEnd = 3,     // the file ends halfway through this frame (later items dropped)
    ZeroHeader = 4,  // 24 zero bytes instead of the header: where the log ends
    Count = 5,
};

struct LogItem {
    enum class Type : uint8_t { Event = 'E', Record = 'R', FrameEnd = 'F' } type = Type::Event;
    format::Event event{};
    uint8_t tag = 0;
    std::vector<uint8_t> body;
    FrameDamage damage = FrameDamage::None;
    uint16_t skip = 0;
};

struct RingItem {
    uint64_t position = 0;
    bool committed = true; // seq = position + 1; else seq stays what it was
    format::Slot slot{};
};

struct TraceSpec {
    uint8_t ring_slots_log2 = 10; // 10 ... 12
    uint64_t dropped_events = 0;
    std::vector<LogItem> log;
    std::vector<RingItem> ring;
};

std::vector<uint8_t> serialize(const TraceSpec& spec);
// Lenient: false only when the input is not a spec at all (no magic).
bool deserialize(const uint8_t* data, size_t size, TraceSpec& spec);

// A valid prologue followed by an empty ring of `ring_slots` slots: where a log starts.
std::vector<uint8_t> emptyTrace(uint32_t ring_slots, uint64_t dropped_events = 0);

// The trace file: prologue, ring (slot p at index p mod slots), frames. Positions: an
// event takes one, another record as many as its encoding needs 112-byte pieces.
std::vector<uint8_t> buildTrace(const TraceSpec& spec);

// Positions the log's valid frames cover (the end_seq of the last frame built).
uint64_t logPositions(const TraceSpec& spec);

// Encoded non-event records with plausible (random) contents.
LogItem randomRecord(std::mt19937_64& rng, const TraceSpec& spec);
format::Event randomEvent(std::mt19937_64& rng, const TraceSpec& spec);

// Appends the slots of a record written to the ring as Blob + BlobCont pieces from
// `position`; `omit` (1-based continuation) leaves one piece uncommitted.
void addRingRecord(TraceSpec& spec, uint64_t position, uint8_t tag,
                   const std::vector<uint8_t>& body, uint32_t omit = 0);

enum class Focus { Records, Ring };
// One to a few structural mutations. `mutate_bytes` is libFuzzer's byte mutator (for
// record bodies and slot payloads).
void mutate(TraceSpec& spec, std::mt19937_64& rng, Focus focus,
            size_t (*mutate_bytes)(uint8_t*, size_t, size_t));
// A child of two specs: a prefix of one's log and ring and a suffix of the other's.
TraceSpec crossOver(const TraceSpec& a, const TraceSpec& b, std::mt19937_64& rng);

// A small well-formed trace: header, device, stacks, a few allocations and frees.
TraceSpec seedSpec();

} // namespace gmt::fuzz
