// The recorder's table of Python code objects (preload/python/code_table.h) out of host
// memory at each of its allocations in turn: the names it reads for a code object seen for
// the first time, and the table itself. It runs on the traced program's threads, in a
// library built without exceptions: a std::bad_alloc that left it would end the program.
// Every id a frame gets must name that frame's code; a frame may be left unknown (id 0).
//
// Code objects, strings and bytes are laid out as CPython 3.12's (python/layout.h), in
// buffers of this test: the table reads them with plain loads, as it reads the
// interpreter's.
//
// Its own executable: the global operator new fails on request (failing_allocations.h), which
// no other test binary should carry.
#include "failing_allocations.h"
#include "python/code_table.h"
#include "python/frame_walker.h"
#include "python/layout.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <string>
#include <vector>

using namespace gmt::preload::python;
using namespace gmt::test;

namespace {

std::string nameOf(uint32_t n) {
    return "Model.forward_step_" + std::to_string(n);
}

// Stand-ins for &PyUnicode_Type and &PyBytes_Type: only their addresses are compared.
const char kStrType = 0, kBytesType = 0;

class FakeObjects {
  public:
    explicit FakeObjects(const Layout& l) : l_(l) {}

    uintptr_t str(const std::string& text) {
        auto& b = buffer(l_.str_ascii_size + text.size() + 1);
        put<uintptr_t>(b, l_.object_type, reinterpret_cast<uintptr_t>(&kStrType));
        put<int64_t>(b, l_.str_length, static_cast<int64_t>(text.size()));
        put<uint32_t>(b, l_.str_state, 1u << 2 | 1u << 5 | 1u << 6); // 1-byte, compact, ASCII
        std::memcpy(b.data() + l_.str_ascii_size, text.data(), text.size());
        return reinterpret_cast<uintptr_t>(b.data());
    }
    uintptr_t bytes(const std::string& data) {
        auto& b = buffer(l_.bytes_data + data.size() + 1);
        put<uintptr_t>(b, l_.object_type, reinterpret_cast<uintptr_t>(&kBytesType));
        put<int64_t>(b, l_.bytes_size, static_cast<int64_t>(data.size()));
        std::memcpy(b.data() + l_.bytes_data, data.data(), data.size());
        return reinterpret_cast<uintptr_t>(b.data());
    }
    // A code object; `version`: its co_version (0: none, as when the counter ran out).
    uintptr_t code(uint32_t n, uint32_t version) {
        auto& b = buffer(512);
        // Longer than a std::string holds in place: reading them allocates.
        put<uintptr_t>(b, l_.code_filename,
                       str("/app/package/module_" + std::to_string(n) + ".py"));
        put<uintptr_t>(b, l_.code_name, str(nameOf(n)));
        put<uintptr_t>(b, l_.code_line_table, bytes(std::string(20 + n % 5, 'x')));
        put<int32_t>(b, l_.code_first_line, static_cast<int32_t>(n));
        if (l_.code_version != kNoField) {
            put<uint32_t>(b, l_.code_version, version);
        }
        return reinterpret_cast<uintptr_t>(b.data());
    }

  private:
    std::vector<unsigned char>& buffer(size_t size) {
        buffers_.emplace_back(size + 16, 0);
        return buffers_.back();
    }
    template <typename T> static void put(std::vector<unsigned char>& b, uint32_t at, T v) {
        std::memcpy(b.data() + at, &v, sizeof v);
    }
    const Layout& l_;
    std::deque<std::vector<unsigned char>> buffers_; // a buffer stays where it is
};

// What the table wrote: each id's name. Reserved beforehand: the test's own thread
// allocates nothing of its own while memory is short.
struct Written {
    std::vector<std::string> names; // by id
};

void emit(const gmt::format::PythonCodeInfo& code, void* ctx) {
    auto& w = *static_cast<Written*>(ctx);
    if (code.id < w.names.size()) {
        w.names[code.id].assign(code.name); // fits its reserved room
    }
}

} // namespace

TEST_CASE("python code objects out of memory: each id names its frame's code, or none") {
    Interpreter in;
    in.layout = *builtinLayout(0x030c0000);
    in.version = 0x030c0000;
    in.str_type = reinterpret_cast<uintptr_t>(&kStrType);
    in.bytes_type = reinterpret_cast<uintptr_t>(&kBytesType);
    REQUIRE(in.layout.code_version != kNoField);

    constexpr uint32_t kCodes = 600; // more than a thread's cache holds (256)
    FakeObjects objects(in.layout);
    std::vector<uintptr_t> codes;
    for (uint32_t n = 0; n < kCodes; ++n) {
        codes.push_back(objects.code(n, n % 2 ? n + 1 : 0)); // with co_version and without
    }

    // One table, as in the recorder: the threads' caches belong to it (a new generation at
    // each reset empties them).
    CodeTable table;
    long failed = 0;
    for (long allowed : kFirstFailures) {
        CAPTURE(allowed);
        table.reset();
        Written written;
        written.names.resize(4 * kCodes + 2);
        for (auto& name : written.names) {
            name.reserve(64);
        }
        std::vector<uint32_t> ids(2 * kCodes);
        g_failed_allocations = 0;
        {
            Exhausted exhausted(Failing::TestThread, allowed);
            for (uint32_t round = 0; round < 2; ++round) { // each met twice
                for (uint32_t n = 0; n < kCodes; ++n) {
                    WalkedFrames walked;
                    walked.count = 1;
                    walked.code[0] = codes[n];
                    table.intern(in, walked, &ids[round * kCodes + n], &emit, &written);
                }
            }
        }
        failed += g_failed_allocations;
        uint32_t unknown = 0;
        for (uint32_t k = 0; k < 2 * kCodes; ++k) {
            const uint32_t id = ids[k];
            if (id == 0) {
                ++unknown;
                continue;
            }
            REQUIRE(id < written.names.size());
            REQUIRE(written.names[id] == nameOf(k % kCodes));
        }
        if (g_failed_allocations == 0) {
            // Memory enough: every frame known, one id per code object.
            CHECK(unknown == 0);
            for (uint32_t n = 0; n < kCodes; ++n) {
                CHECK(ids[n] == ids[kCodes + n]);
            }
        } else {
            // Once memory is short for good, the names of a code not seen yet cannot be
            // read: those frames are unknown, never named wrongly.
            CHECK(unknown > 0);
        }
    }
    CHECK(failed > 0);
}
