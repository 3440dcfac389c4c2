// libFuzzer target for the reader and the whole analysis behind it. A random file rarely
// gets past the prologue and frame checksums, so the input picks a mode:
//   0: the input is the whole file;
//   1: a valid prologue, then the input as frames: each chunk [u16 size][payload] is
//      wrapped in a frame header with a correct checksum, so record decoding is reached;
//   2: like 1, but the first half of the input fills the ring (ring recovery is reached).
// Invariant: TraceError or a report, never a crash, a hang or an unbounded allocation.
#include "analyze_file.h"
#include "trace_spec.h"

#include <cstring>
#include <vector>

namespace {

using namespace gmt;

std::vector<uint8_t> withPrologue(const uint8_t* data, size_t size, bool ring) {
    const uint32_t slots = format::kMinRingSlots;
    std::vector<uint8_t> file = fuzz::emptyTrace(slots);
    if (ring) {
        size_t half = std::min<size_t>(size / 2, size_t{slots} * format::kSlotSize);
        std::memcpy(file.data() + format::kPrologueSize, data, half);
        data += half;
        size -= half;
    }
    uint64_t seq = 0;
    while (size >= 2) {
        size_t n = std::min<size_t>(size - 2, data[0] | (size_t{data[1]} << 8));
        format::FrameHeader h{};
        h.magic = format::kFrameMagic;
        h.payload_size = static_cast<uint32_t>(n);
        h.record_count = n ? data[2] : 0; // whatever; a mismatch is a finding too
        h.end_seq = seq += 3;
        h.checksum = format::frameChecksum(h, data + 2);
        const auto* hb = reinterpret_cast<const uint8_t*>(&h);
        file.insert(file.end(), hb, hb + sizeof h);
        file.insert(file.end(), data + 2, data + 2 + n);
        data += 2 + n;
        size -= 2 + n;
    }
    return file;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    const uint8_t mode = data[0] % 3;
    gmt::fuzz::analyzeFile(mode == 0 ? std::vector<uint8_t>(data + 1, data + size)
                                     : withPrologue(data + 1, size - 1, mode == 2));
    return 0;
}
