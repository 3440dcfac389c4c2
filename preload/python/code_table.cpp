#include "code_table.h"

#include "objects.h"
#include "out_of_memory.h"
#include "plain_load.h"

#include <gpumemtrace/format/checksum.h>

#include <optional>

namespace gmt::preload::python {
namespace {

constexpr uint32_t kCacheSize = 256;

struct CacheEntry {
    CodeTable::Key key;
    uint32_t id;
};

struct ThreadCache {
    uint64_t generation;
    CacheEntry by_depth[format::kMaxPythonDepth]; // counted from the outermost frame
    CacheEntry entries[kCacheSize];
};
// initial-exec: no allocation or lock on first access, as for the stack table's cache.
// constinit: zeroed when the thread starts, so no guard is checked on access (with one, every
// access called __tls_get_addr, initial-exec or not: tests/recorder/traced_path_check.py).
constinit thread_local ThreadCache t_codes __attribute__((tls_model("initial-exec"))){};

uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t h = (a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2))) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

// The parts of a code object its record describes.
struct Parts {
    Contents filename, name, table;
    int32_t first_line = 0;
};

bool readParts(const Interpreter& in, uintptr_t code, Parts& p) {
    const Layout& l = in.layout;
    p.first_line = load<int32_t>(code + l.code_first_line);
    return strContents(in, load<uintptr_t>(code + l.code_filename), p.filename) &&
           strContents(in, load<uintptr_t>(code + l.code_name), p.name) &&
           bytesContents(in, load<uintptr_t>(code + l.code_line_table), p.table);
}

const void* at(const Contents& c) {
    return reinterpret_cast<const void*>(c.data);
}

// Per event, where code objects carry no version: is this the code object the cache entry
// was made from? Same addresses and sizes of its parts, same first line, and the same
// CRC-32C of their contents (one instruction per 8 bytes where the CPU has it). A reused
// address passes only if all of that matches: with other contents, one chance in 2^32.
uint64_t quickCheck(const Parts& p) {
    uint32_t crc = format::crc32c(at(p.filename), p.filename.size);
    crc = format::crc32c(at(p.name), p.name.size, crc);
    crc = format::crc32c(at(p.table), p.table.size, crc);
    uint64_t shape = mix(mix(p.filename.data, p.name.data), p.table.data);
    shape = mix(shape, p.filename.size << 40 ^ p.name.size << 24 ^ p.table.size);
    shape = mix(shape, static_cast<uint32_t>(p.first_line) | uint64_t{p.filename.kind} << 32 |
                           uint64_t{p.name.kind} << 40);
    return uint64_t{1} << 63 | (shape & 0x7fffffff00000000ull) | crc;
}

// The global key of a code object's contents: equal contents, equal keys; different ones
// collide by chance only (64 bits).
uint64_t contentHash(const Parts& p) {
    uint64_t h = hashBytes(at(p.filename), p.filename.size, p.filename.kind);
    h = hashBytes(at(p.name), p.name.size, h ^ p.name.kind);
    h = hashBytes(at(p.table), p.table.size, h);
    return mix(h, static_cast<uint32_t>(p.first_line));
}

bool describe(const Interpreter& in, uintptr_t code, format::PythonCodeInfo& out) {
    const Layout& l = in.layout;
    out.table_format = l.line_table;
    out.first_line = load<int32_t>(code + l.code_first_line);
    return readStr(in, load<uintptr_t>(code + l.code_filename), format::kMaxPythonFilename,
                   out.filename) &&
           readStr(in, load<uintptr_t>(code + l.code_name), format::kMaxPythonName, out.name) &&
           readBytes(in, load<uintptr_t>(code + l.code_line_table), format::kMaxPythonLineTable,
                     out.line_table);
}

} // namespace

size_t CodeTable::KeyHash::operator()(const Key& k) const {
    return static_cast<size_t>(mix(k.object, k.check));
}

void CodeTable::intern(const Interpreter& in, const WalkedFrames& walked, uint32_t* ids,
                       EmitFn emit, void* ctx) {
    ThreadCache& cache = t_codes;
    const uint64_t gen = generation_.load(std::memory_order_acquire);
    if (cache.generation != gen) {
        for (CacheEntry& e : cache.entries) {
            e = {};
        }
        for (CacheEntry& e : cache.by_depth) {
            e = {};
        }
        cache.generation = gen;
    }
    for (uint32_t i = 0; i < walked.count; ++i) {
        ids[i] = internOne(&cache, in, walked.code[i], walked.count - 1 - i, emit, ctx);
    }
}

uint32_t CodeTable::internOne(ThreadCacheRef cache_ref, const Interpreter& in, uintptr_t code,
                              uint32_t depth, EmitFn emit, void* ctx) {
    ThreadCache& cache = *static_cast<ThreadCache*>(cache_ref);
    // co_version (3.12+) tells a code object apart by itself; it comes from a counter that
    // stops at 0 when it runs out, and then, as before 3.12, the contents must.
    uint32_t version = 0;
    if (in.layout.code_version != kNoField) {
        version = load<uint32_t>(code + in.layout.code_version);
    }
    // Read only where the check needs them, or for a code object not seen before: most
    // events find every frame's code in the cache by its version alone.
    std::optional<Parts> parts;
    Key cached{code, version};
    if (version == 0) {
        if (!readParts(in, code, parts.emplace())) {
            return 0;
        }
        cached.check = quickCheck(*parts);
    }
    CacheEntry& last = cache.by_depth[depth % format::kMaxPythonDepth];
    if (last.id != 0 && last.key == cached) {
        return last.id;
    }
    CacheEntry& slot = cache.entries[KeyHash{}(cached) % kCacheSize];
    if (slot.id != 0 && slot.key == cached) {
        last = slot;
        return slot.id;
    }
    uint32_t id = 0;
    {
        std::lock_guard lock(mutex_);
        auto it = version != 0 ? ids_.find(cached) : ids_.end();
        if (it != ids_.end()) {
            id = it->second;
        } else {
            if (!parts && !readParts(in, code, parts.emplace())) {
                return 0;
            }
            // One id for one content, whichever object had it: a module reloaded or code
            // generated again keeps its stacks together.
            const Key content{0, contentHash(*parts)};
            auto same = ids_.find(content);
            if (same != ids_.end()) {
                id = same->second;
            } else {
                // Out of host memory for its names, the frame is unknown, as one whose
                // fields cannot be read; for the table (an insertion that throws leaves it
                // as it was), the code is written again under a new id when next met.
                format::PythonCodeInfo info;
                bool described = false;
                if (!withoutThrowing([&] { described = describe(in, code, info); }) || !described) {
                    return 0;
                }
                id = next_id_++;
                info.id = id;
                emit(info, ctx);
                withoutThrowing([&] { ids_.emplace(content, id); });
            }
            if (version != 0) {
                withoutThrowing([&] { ids_.emplace(cached, id); });
            }
        }
    }
    slot = {cached, id};
    last = slot;
    return id;
}

void CodeTable::reset() {
    ids_.clear();
    next_id_ = 1;
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace gmt::preload::python
