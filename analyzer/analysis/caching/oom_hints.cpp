#include "analysis/caching/oom_hints.h"

#include "base/human_bytes.h"

#include <algorithm>

namespace gmt::analyzer {

void explainOom(const BlockOom& oom, const AllocatorRules& rules, CachingOomReport& out) {
    const InsideSegments& s = oom.space;
    const uint64_t want = oom.requested;
    const uint64_t inside = s.free_bytes; // free blocks in the segments the allocator kept
    const uint64_t total_free = inside + oom.device_free;
    uint64_t stream_largest = 0;
    for (const StreamSpaceReport& st : s.streams) {
        if (st.stream == oom.stream) {
            stream_largest = st.largest_free_bytes;
        }
    }
    const uint64_t segment = AllocatorRules::segmentSize(want);
    out.fragmentation = total_free >= want;
    if (out.fragmentation) {
        out.diagnosis =
            "fragmentation inside segments: " + humanBytes(s.reserved_unallocated_bytes) +
            " reserved but unallocated (" + humanBytes(inside) + " in " +
            std::to_string(s.inactive_split_blocks) + " free blocks, the largest on its stream " +
            humanBytes(stream_largest) + ") and the driver's " + humanBytes(oom.device_free) +
            " free would together hold the " + humanBytes(want) +
            " asked for, but no free block is large enough and a new " + humanBytes(segment) +
            " segment does not fit";
    } else {
        out.diagnosis = "out of memory: tensors hold " + humanBytes(s.allocated_bytes) + " in " +
                        humanBytes(s.reserved_bytes) +
                        " of segments; with every free byte inside them (" + humanBytes(inside) +
                        ") and the driver's " + humanBytes(oom.device_free) + " free, the " +
                        humanBytes(want) + " asked for is " + humanBytes(want - total_free) +
                        " short";
    }

    OomHint expandable{"expandable_segments", "", false, ""};
    if (rules.expandable_segments) {
        expandable.verdict = "already on";
        expandable.why = "PYTORCH_CUDA_ALLOC_CONF has expandable_segments:True";
    } else if (!out.fragmentation) {
        expandable.verdict = "would not have helped";
        expandable.why = "it lets free memory inside segments be used again, and even all of it "
                         "with the driver's free memory is less than the request";
    } else {
        const uint64_t pages = s.free_whole_pages;
        expandable.estimate = true;
        expandable.verdict =
            pages + oom.device_free >= want ? "would likely have avoided it" : "might have helped";
        expandable.why = "a segment that grows page by page can unmap free pages and map them "
                         "where they are needed: here " +
                         humanBytes(pages) + " of the free blocks are whole 2 MiB pages, with " +
                         humanBytes(oom.device_free) + " free on the device, against the " +
                         humanBytes(want) +
                         " asked for (an estimate: the blocks would lie "
                         "differently in expandable segments)";
    }
    out.hints.push_back(std::move(expandable));

    OomHint split{"max_split_size_mb", "", false, ""};
    if (want <= AllocatorRules::kSmallSize) {
        split.verdict = "would not have helped";
        split.why = "it limits splitting of large blocks; this request (" + humanBytes(want) +
                    ") is a small one, served from 2 MiB segments";
    } else if (!out.fragmentation) {
        split.verdict = "would not have helped";
        split.why = "the memory is short in total, not split";
    } else if (rules.max_split_size != UINT64_MAX) {
        split.estimate = true;
        split.verdict = "might have helped with a lower value";
        split.why = "it is set to " + humanBytes(rules.max_split_size) +
                    "; blocks at least that large are not split";
    } else {
        split.estimate = true;
        split.verdict = "might have helped";
        split.why = "blocks at least that large are not split, so large cached blocks stay whole "
                    "for requests like this one; a value below " +
                    humanBytes(want) + ", e.g. max_split_size_mb:" +
                    std::to_string(std::max<uint64_t>(want / 2 >> 20, 1)) +
                    " (an estimate: the allocations would have been placed differently)";
    }
    out.hints.push_back(std::move(split));

    OomHint cache{"empty_cache", "would not have helped", false, ""};
    cache.why = "the allocator gives back every wholly free cached segment before it gives up (" +
                humanBytes(oom.released_before) +
                " given back right before this one); what stays reserved holds live blocks";
    if (s.releasable_bytes > 0) {
        cache.verdict = "might have helped";
        cache.estimate = true;
        cache.why = humanBytes(s.releasable_bytes) + " of segments were wholly free but kept";
    }
    out.hints.push_back(std::move(cache));

    OomHint batch{"smaller batch", "", true, ""};
    if (!out.fragmentation) {
        batch.verdict = "needed";
        batch.why = "what is alive at the OOM must shrink by at least " +
                    humanBytes(want - total_free) + " (of the " + humanBytes(s.allocated_bytes) +
                    " allocated) for the request to fit; which tensors scale with the batch is "
                    "not in the trace (an estimate)";
    } else {
        batch.verdict = "might have helped";
        batch.why = "a smaller request fits a smaller free block: the largest free block on its "
                    "stream is " +
                    humanBytes(stream_largest) + " (an estimate)";
    }
    out.hints.push_back(std::move(batch));
}

} // namespace gmt::analyzer
