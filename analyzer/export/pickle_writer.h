// A Python pickle (protocol 4) encoder for the few types a PyTorch memory snapshot holds:
// dicts, lists, a tuple of two, str, int, bool, None. Written by hand because no Debian
// package offers a C++ pickler, and the subset is small: opcodes are appended as they
// come, so a snapshot of any length streams out without being held.
//
// Only opcodes that both CPython's unpickler and the JavaScript unpickler of PyTorch's
// memory viewer (MemoryViz.js, pytorch.org/memory_viz) understand are used: no FRAME
// (optional), no POP, no MEMOIZE mixed with explicit memo indexes. Lists and dicts are
// filled in batches of at most kBatch items, as CPython's pickler does: the viewer spreads
// a batch into a function call's arguments, which a JavaScript engine limits.
//
// Memo: `put(i)` stores the object on top of the stack at index i, `get(i)` pushes it
// again; a repeated string or frames list costs five bytes after its first time.
#pragma once

#include "base/output_file.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace gmt::analyzer {

class PickleWriter {
  public:
    static constexpr size_t kBatch = 1000;

    explicit PickleWriter(OutputFile& out) : out_(out) {}

    void protocol() { op2(0x80, 4); }   // PROTO 4
    void stop() { out_.put('.'); }      // STOP
    void emptyDict() { out_.put('}'); } // EMPTY_DICT
    void emptyList() { out_.put(']'); } // EMPTY_LIST
    void mark() { out_.put('('); }      // MARK
    void appends() { out_.put('e'); }   // APPENDS: items since the mark into the list
    void setItems() { out_.put('u'); }  // SETITEMS: key, value pairs since the mark
    void tuple2() { out_.put('\x86'); } // TUPLE2
    void boolean(bool v) { out_.put(v ? '\x88' : '\x89'); }
    void none() { out_.put('N'); }
    void string(std::string_view utf8); // must be valid UTF-8
    void integer(int64_t value);
    void unsignedInteger(uint64_t value);
    void put(uint32_t memo);
    void get(uint32_t memo);

  private:
    void op2(char op, char arg) {
        out_.put(op);
        out_.put(arg);
    }
    void longInteger(const unsigned char* le_bytes, size_t n);

    OutputFile& out_;
};

// Items of a list or pairs of a dict, in batches: make it once the empty container is on
// the stack, call item() before each item (a dict: before each key), end() after the last.
class PickleBatch {
  public:
    enum class Of { List, Dict };
    PickleBatch(PickleWriter& pickle, Of of) : pickle_(pickle), of_(of) {}
    void item() {
        if (count_ % PickleWriter::kBatch == 0) {
            if (count_ > 0) {
                close();
            }
            pickle_.mark();
        }
        ++count_;
    }
    void end() {
        if (count_ > 0) {
            close();
        }
        count_ = 0;
    }

  private:
    void close() { of_ == Of::Dict ? pickle_.setItems() : pickle_.appends(); }
    PickleWriter& pickle_;
    Of of_;
    size_t count_ = 0;
};

} // namespace gmt::analyzer
