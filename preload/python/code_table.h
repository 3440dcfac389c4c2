// Interns CPython code objects: each distinct one gets a small id, and its filename,
// qualified name, first line and line table are written once (a PythonCode record) before
// the first stack that names it. Events then carry only (code id, instruction offset).
//
// A code object's address is not its identity: a freed code object's memory is reused by
// the next. What a cached id is checked against changes with the object: its co_version
// where CPython numbers code objects (3.12+, a counter no two objects share), else (3.10,
// 3.11) the addresses and sizes of everything the record says (filename, name, line table)
// with their CRC-32C and the first line, so that a reused address with other contents is
// seen as a new object. Ids are given per content (a 64-bit hash of all of it), so one with
// the same contents is described right anyway.
//
// Per thread, the code seen last at each depth of the stack, then a direct-mapped cache,
// answer the steady state without a lock; a miss takes the table's mutex, never any lock of
// the interpreter.
#pragma once

#include "frame_walker.h"
#include "interpreter.h"

#include <gpumemtrace/format/records.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace gmt::preload::python {

class CodeTable {
  public:
    // Called under the table's lock for a code object seen for the first time; must put its
    // record into the trace before returning, since stacks naming it follow.
    using EmitFn = void (*)(const format::PythonCodeInfo& code, void* ctx);

    // The ids of the code objects of one walk of the calling thread's frames, ids[i] for
    // walked.code[i] (live ones: the thread's frames hold them); 0 where the fields are not
    // what a code object's should be. The thread remembers the code it last saw at each depth
    // counted from the outermost frame, which answers a stack much like the last one without
    // any hashing. One call per event, so the thread's cache is looked up once, not per frame.
    void intern(const Interpreter& interp, const WalkedFrames& walked, uint32_t* ids, EmitFn emit,
                void* ctx);

    // A new trace (forked child): every code object must be written again.
    void reset();

    std::mutex& mutex() { return mutex_; }

    struct Key {
        uint64_t object = 0; // the code object's address; 0 for a content key
        uint64_t check = 0;  // co_version, the per-event check of the parts, or the content hash
        bool operator==(const Key&) const = default;
    };

  private:
    struct KeyHash {
        size_t operator()(const Key& k) const;
    };
    using ThreadCacheRef = void*; // the calling thread's cache (code_table.cpp)
    uint32_t internOne(ThreadCacheRef cache, const Interpreter& interp, uintptr_t code,
                       uint32_t depth, EmitFn emit, void* ctx);

    std::mutex mutex_;
    std::unordered_map<Key, uint32_t, KeyHash> ids_;
    uint32_t next_id_ = 1;
    std::atomic<uint64_t> generation_{1};
};

} // namespace gmt::preload::python
