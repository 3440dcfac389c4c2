#include "read/checkpoint_reader.h"

#include "read/record_decoder.h"

#include <span>

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/byte_coding.h>

namespace gmt::analyzer {

uint64_t checkpointRegionSize(const format::Prologue& p) {
    const uint64_t ring_end = p.ring_offset + uint64_t{p.ring_slots} * p.slot_size;
    if ((p.flags & format::kPrologueAggregated) == 0 || p.log_offset <= ring_end) {
        return 0;
    }
    const uint64_t area = p.log_offset - ring_end;
    const uint64_t region = area / 2;
    if (area % 2 != 0 || region % format::kCheckpointAlign != 0 ||
        region > format::kMaxCheckpointRegion || region < sizeof(format::CheckpointHeader)) {
        return 0;
    }
    return region;
}

CheckpointReader::CheckpointReader(const TraceFile& file, const format::Prologue& prologue) {
    const uint64_t region = checkpointRegionSize(prologue);
    const uint64_t ring_end =
        prologue.ring_offset + uint64_t{prologue.ring_slots} * prologue.slot_size;
    uint64_t best_sequence = 0;
    for (uint64_t index = 0; index < 2 && region > 0; ++index) {
        const uint64_t at = ring_end + index * region;
        format::CheckpointHeader h{};
        if (file.read(at, &h, sizeof h) != sizeof h || h.magic != format::kCheckpointMagic ||
            h.sequence <= best_sequence || h.payload_size > region - sizeof h) {
            continue;
        }
        std::vector<uint8_t> payload(h.payload_size);
        if (file.read(at + sizeof h, payload.data(), payload.size()) != payload.size() ||
            format::checkpointChecksum(h, payload.data()) != h.checksum) {
            continue; // torn: the other region holds the one before
        }
        best_sequence = h.sequence;
        end_seq_ = h.end_seq;
        payload_ = std::move(payload);
        found_ = true;
    }
}

bool CheckpointReader::next(Record& out) {
    while (cursor_ < payload_.size()) {
        format::ByteReader r(
            std::span<const uint8_t>(payload_.data() + cursor_, payload_.size() - cursor_));
        const size_t before = r.remaining();
        const DecodeStatus status = decodeRecord(r, out, prev_);
        if (status == DecodeStatus::Malformed) {
            ++skipped_;
            cursor_ = payload_.size();
            return false;
        }
        cursor_ += before - r.remaining();
        if (status == DecodeStatus::Ok) {
            out.from_ring = false;
            out.missing_before = 0;
            return true;
        }
        ++skipped_;
    }
    return false;
}

} // namespace gmt::analyzer
