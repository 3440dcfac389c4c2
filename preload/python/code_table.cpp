#include "code_table.h"

#include "objects.h"

#include <cstring>

namespace gmt::preload::python {
namespace {

template <typename T> T load(uintptr_t address) {
    T v;
    std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof v);
    return v;
}

constexpr uint32_t kCacheSize = 256;

struct CacheEntry {
    CodeTable::Key key;
    uint32_t id;
};

struct ThreadCache {
    uint64_t generation;
    CacheEntry entries[kCacheSize];
};
// initial-exec: no allocation or lock on first access, as for the stack table's cache.
thread_local ThreadCache t_codes __attribute__((tls_model("initial-exec")));

uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t h = (a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2))) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

// Everything the code object's record says, hashed: equal contents, equal keys.
bool contentKey(const Interpreter& in, uintptr_t code, CodeTable::Key& key) {
    const Layout& l = in.layout;
    bool ok_file = false, ok_name = false, ok_table = false;
    uint64_t h = mix(strContentHash(in, load<uintptr_t>(code + l.code_filename), ok_file),
                     strContentHash(in, load<uintptr_t>(code + l.code_name), ok_name));
    h = mix(h, bytesContentHash(in, load<uintptr_t>(code + l.code_line_table), ok_table));
    h = mix(h, static_cast<uint32_t>(load<int32_t>(code + l.code_first_line)));
    key = {0, h};
    return ok_file && ok_name && ok_table;
}

// What tells this code object apart from any other that was or will be at its address:
// co_version where there is one (a counter that stops at 0 when it runs out), else the
// contents.
bool identify(const Interpreter& in, uintptr_t code, CodeTable::Key& key) {
    if (in.layout.code_version != kNoField) {
        if (uint32_t version = load<uint32_t>(code + in.layout.code_version)) {
            key = {code, version};
            return true;
        }
    }
    return contentKey(in, code, key);
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

uint32_t CodeTable::intern(const Interpreter& in, uintptr_t code, EmitFn emit, void* ctx) {
    Key key;
    if (!identify(in, code, key)) {
        return 0;
    }
    ThreadCache& cache = t_codes;
    const uint64_t gen = generation_.load(std::memory_order_acquire);
    if (cache.generation != gen) {
        for (CacheEntry& e : cache.entries) {
            e = {};
        }
        cache.generation = gen;
    }
    CacheEntry& slot = cache.entries[KeyHash{}(key) % kCacheSize];
    if (slot.id != 0 && slot.key == key) {
        return slot.id;
    }
    uint32_t id = 0;
    {
        std::lock_guard lock(mutex_);
        auto it = ids_.find(key);
        if (it != ids_.end()) {
            id = it->second;
        } else {
            // A code object new by its co_version may still say what an earlier one said
            // (a module reloaded, code generated again): one id for one content keeps its
            // stacks together.
            Key content = key;
            if (key.object != 0 && !contentKey(in, code, content)) {
                return 0;
            }
            auto same = ids_.find(content);
            if (same != ids_.end()) {
                id = same->second;
            } else {
                format::PythonCodeInfo info;
                if (!describe(in, code, info)) {
                    return 0;
                }
                id = next_id_++;
                info.id = id;
                emit(info, ctx);
                ids_.emplace(content, id);
            }
            ids_.emplace(key, id);
        }
    }
    slot = {key, id};
    return id;
}

void CodeTable::reset() {
    ids_.clear();
    next_id_ = 1;
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace gmt::preload::python
