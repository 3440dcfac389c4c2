// Structure-aware fuzzing: the input is a TraceSpec (trace_spec.h), mutated as decoded
// records — event fields set to values other events use or to edge values, events and
// records inserted, removed, duplicated and reordered, frames cut and damaged, ring slots
// placed around where the log ends — then built into a trace whose frames carry valid
// checksums, so that every input reaches the analysis. Plain byte mutation (the reader
// target) rarely gets past a checksum.
//
// Built twice (tests/analyzer/fuzz/CMakeLists.txt): GMT_FUZZ_FOCUS is Focus::Records for
// gmt_fuzz_records (mostly log mutations) and Focus::Ring for gmt_fuzz_ring (mostly ring
// slots: recovery, joins and gaps between the log and the ring).
#include "analyze_file.h"
#include "trace_spec.h"

#include <cstring>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

gmt::fuzz::TraceSpec specOf(const uint8_t* data, size_t size) {
    gmt::fuzz::TraceSpec spec;
    if (!gmt::fuzz::deserialize(data, size, spec)) {
        spec = gmt::fuzz::seedSpec();
    }
    return spec;
}

size_t store(const gmt::fuzz::TraceSpec& spec, uint8_t* data, size_t max_size) {
    std::vector<uint8_t> bytes = gmt::fuzz::serialize(spec);
    if (bytes.size() > max_size) {
        return 0;
    }
    std::memcpy(data, bytes.data(), bytes.size());
    return bytes.size();
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
    std::mt19937_64 rng(seed);
    gmt::fuzz::TraceSpec spec = specOf(data, size);
    gmt::fuzz::mutate(spec, rng, GMT_FUZZ_FOCUS, LLVMFuzzerMutate);
    if (size_t n = store(spec, data, max_size)) {
        return n;
    }
    // Grown past the size limit: start over from the seed rather than return garbage.
    return store(gmt::fuzz::seedSpec(), data, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* a, size_t a_size, const uint8_t* b,
                                            size_t b_size, uint8_t* out, size_t max_size,
                                            unsigned int seed) {
    std::mt19937_64 rng(seed);
    return store(gmt::fuzz::crossOver(specOf(a, a_size), specOf(b, b_size), rng), out, max_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    gmt::fuzz::analyzeFile(gmt::fuzz::buildTrace(specOf(data, size)));
    return 0;
}
