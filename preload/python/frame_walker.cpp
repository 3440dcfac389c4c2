#include "frame_walker.h"

#include "plain_load.h"

namespace gmt::preload::python {
namespace {

// Frames are walked at most this far: a bound, not a limit anyone should meet (the kept
// frames stop at kMaxPythonDepth).
constexpr int kMaxWalk = 4096;

} // namespace

void walkFrames(const Interpreter& in, uintptr_t tstate, WalkedFrames& out) {
    const Layout& l = in.layout;
    out.count = 0;
    out.segments = 0;
    out.broken = false;
    out.hint = 0;
    uintptr_t frame = 0;
    if (l.tstate_cframe != kNoField) {
        uintptr_t cframe = load<uintptr_t>(tstate + l.tstate_cframe);
        frame = cframe ? load<uintptr_t>(cframe + l.cframe_current_frame) : 0;
    } else {
        frame = load<uintptr_t>(tstate + l.tstate_frame);
    }
    auto endSegment = [&out] {
        if (out.segments < format::kMaxPythonDepth + 1) {
            out.segment_end[out.segments++] = out.count;
        }
    };
    const bool modern_code_only = (l.version >> 16) >= 0x030d;
    for (int walked = 0; frame != 0 && walked < kMaxWalk; ++walked) {
        const uint8_t owner = l.frame_owner != kNoField ? load<uint8_t>(frame + l.frame_owner) : 0;
        const uintptr_t next = load<uintptr_t>(frame + l.frame_previous);
        if (l.segments == Segments::CStackOwner && owner == kOwnedByCStack) {
            endSegment(); // the entry frame a native evaluation call pushed below its frames
            frame = next;
            continue;
        }
        const uintptr_t code = load<uintptr_t>(frame + l.frame_code);
        if (code == 0 || load<uintptr_t>(code + l.object_type) != in.code_type) {
            if (!modern_code_only) {
                out.broken = true;
                return;
            }
            frame = next; // 3.13: an executable that is not a code object has no Python line
            continue;
        }
        int64_t index;
        if (l.instruction == Instruction::PointerToUnit) {
            const auto at = static_cast<int64_t>(load<uintptr_t>(frame + l.frame_instruction));
            index = (at - static_cast<int64_t>(code + l.code_units)) / 2;
        } else {
            index = load<int32_t>(frame + l.frame_instruction);
        }
        // A frame still setting itself up (before its first traceable instruction) is not
        // yet running any line; CPython leaves such frames out of tracebacks too.
        bool incomplete = index < 0;
        if (l.code_first_traceable != kNoField && owner != kOwnedByGenerator) {
            incomplete = incomplete || index < load<int32_t>(code + l.code_first_traceable);
        }
        if (!incomplete) {
            if (out.count == format::kMaxPythonDepth) {
                break;
            }
            out.code[out.count] = code;
            out.instruction[out.count] = static_cast<uint32_t>(index);
            out.hint =
                (out.hint ^ code ^ uint64_t{out.instruction[out.count]} << 40) * 0x100000001b3ull;
            ++out.count;
        }
        if (l.segments == Segments::PerFrame ||
            (l.segments == Segments::EntryFlag && load<uint8_t>(frame + l.frame_is_entry))) {
            endSegment();
        }
        frame = next;
    }
    if (out.count > (out.segments ? out.segment_end[out.segments - 1] : 0)) {
        endSegment(); // frames after the last boundary (the walk was cut short)
    }
}

} // namespace gmt::preload::python
