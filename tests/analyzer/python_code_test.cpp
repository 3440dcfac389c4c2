// Python frames in the analyzer: the line of an instruction from each line-table format
// (against a real interpreter's own co_lines(): the configured one's format, and 3.10's
// also against tables built by its documented rules), the merge of Python frames into
// native stacks, and the records that carry them through the trace format.
#include "read/python_code.h"
#include "subprocess.h"

#include <catch2/catch.hpp>
#include <gpumemtrace/format/record_codec.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>
#include <vector>

using namespace gmt;
using gmt::analyzer::mergeFrames;
using gmt::analyzer::pythonLine;

namespace {

format::PythonCodeInfo code(format::PythonLineTable kind, int first_line,
                            std::vector<uint8_t> table) {
    format::PythonCodeInfo c;
    c.table_format = kind;
    c.first_line = first_line;
    c.line_table.assign(table.begin(), table.end());
    return c;
}

std::string fromHex(const std::string& hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

// Every code object of a few standard modules (functions, their nested code, comprehensions,
// generators, classes), with its line table and what co_lines() says of each range.
const char* kDumpLineTables = R"PY(
import json, sys, types, inspect, threading, json as j2, argparse, email.parser, collections
def codes(c):
    yield c
    for k in c.co_consts:
        if isinstance(k, types.CodeType):
            yield from codes(k)
out = []
for m in (threading, j2.decoder, argparse, email.parser, collections, inspect):
    for c in codes(compile(open(m.__file__).read(), m.__file__, "exec")):
        out.append({"table": c.co_linetable.hex(), "first": c.co_firstlineno,
                    "lines": [[s, e, l or 0] for s, e, l in c.co_lines()]})
print(json.dumps({"version": sys.version_info[:2], "codes": out}))
)PY";

} // namespace

TEST_CASE("line tables give the lines CPython itself gives", "[python]") {
    // The interpreter the build was configured with; GMT_TRACED_PYTHON in the environment
    // checks another one without rebuilding.
    const char* python = std::getenv("GMT_TRACED_PYTHON");
    python = python && *python ? python : GMT_TRACED_PYTHON;
    auto run = test::runProcess({python, "-c", kDumpLineTables});
    INFO(python << ": " << run.err);
    REQUIRE(run.exit_code == 0);
    auto dumped = nlohmann::json::parse(run.out);
    auto version = dumped["version"].get<std::vector<int>>();
    // co_linetable is 3.10's pairs before 3.11, the location table since.
    const auto table =
        version[1] < 11 ? format::PythonLineTable::Pairs310 : format::PythonLineTable::Locations311;
    size_t checked = 0, codes = 0;
    for (const auto& c : dumped["codes"]) {
        auto info = code(table, c["first"].get<int>(), {});
        info.line_table = fromHex(c["table"].get<std::string>());
        ++codes;
        for (const auto& range : c["lines"]) {
            // co_lines() ranges are in bytes; instructions are 2-byte code units.
            for (uint32_t at = range[0].get<uint32_t>(); at < range[1].get<uint32_t>(); at += 2) {
                INFO("code " << codes << " instruction " << at / 2);
                REQUIRE(pythonLine(info, at / 2) == range[2].get<int>());
                ++checked;
            }
        }
    }
    CHECK(codes > 500);
    CHECK(checked > 10000);
}

TEST_CASE("3.10 line tables: pairs of byte and line deltas", "[python]") {
    // Ranges in bytes: [0,6) line 11, [6,10) line 11 (no change), an empty range that moves
    // the line to 13, [10,18) line 13, [18,20) no line, [20,24) line 10.
    auto c = code(format::PythonLineTable::Pairs310, 10,
                  {6, 1, 4, 0, 0, 2, 8, 0, 2, 0x80, 4, static_cast<uint8_t>(-3)});
    std::vector<int> want = {11, 11, 11, 11, 11, 13, 13, 13, 13, 0, 10, 10, 0, 0};
    for (uint32_t i = 0; i < want.size(); ++i) {
        INFO("instruction " << i);
        CHECK(pythonLine(c, i) == want[i]);
    }
    // A jump of more than 127 lines takes two pairs, the first covering no bytes.
    auto far = code(format::PythonLineTable::Pairs310, 1, {0, 127, 4, 73, 2, 1});
    CHECK(pythonLine(far, 0) == 201);
    CHECK(pythonLine(far, 1) == 201);
    CHECK(pythonLine(far, 2) == 202);
    CHECK(pythonLine(code(format::PythonLineTable::Pairs310, 5, {}), 0) == 0);
}

TEST_CASE("location tables: each entry kind, and tables that are not one", "[python]") {
    using T = format::PythonLineTable;
    // 0x80 | kind << 3 | (length - 1)
    auto entry = [](int kind, int length) {
        return static_cast<uint8_t>(0x80 | kind << 3 | (length - 1));
    };
    auto c = code(T::Locations311, 7,
                  {
                      entry(13, 1), 2,          // no columns: line delta +1 (zigzag 2) -> 8
                      entry(0, 2), 5,           // short form: same line, a column byte
                      entry(12, 1), 4, 9,       // one-line form: +2 -> 10
                      entry(15, 3),             // no location
                      entry(14, 1), 3, 0, 1, 1, // long form: delta -1 (zigzag 3) -> 9
                      entry(10, 1), 1, 2,       // one-line form +0 -> 9
                  });
    std::vector<int> want = {8, 8, 8, 10, 0, 0, 0, 9, 9, 0};
    for (uint32_t i = 0; i < want.size(); ++i) {
        INFO("instruction " << i);
        CHECK(pythonLine(c, i) == want[i]);
    }
    // A multi-chunk number: delta 100 is zigzag 200 = 0b11_001000: chunks 8|0x40, 3.
    auto big = code(T::Locations311, 1, {entry(13, 1), 8 | 0x40, 3});
    CHECK(pythonLine(big, 0) == 101);
    // Not starting on an entry byte: nothing is made up.
    CHECK(pythonLine(code(T::Locations311, 1, {0x05, 0x80}), 0) == 0);
    CHECK(pythonLine(code(T::Locations311, 1, {}), 0) == 0);
}

TEST_CASE("Python frames take the place of the evaluation frames that ran them", "[python]") {
    // Native frames 0..4; Python frames placed at evaluation frames 2 (two of them) and
    // 4, and one past the native frames (the unwinder stopped before its frame).
    std::vector<format::PythonFrame> py = {{1, 0, 2}, {2, 0, 2}, {3, 0, 4}, {4, 0, 5}};
    auto merged = mergeFrames(5, py);
    std::vector<std::pair<bool, uint32_t>> got;
    for (auto m : merged) {
        got.emplace_back(m.python, m.index);
    }
    CHECK(got ==
          std::vector<std::pair<bool, uint32_t>>{
              {false, 0}, {false, 1}, {true, 0}, {true, 1}, {false, 3}, {true, 2}, {true, 3}});
    // No native frames at all (GPUMEMTRACE_STACK_DEPTH=0): the Python frames alone.
    CHECK(mergeFrames(0, {{1, 0, 0}, {2, 0, 0}}).size() == 2);
}

TEST_CASE("Python frames and code objects survive the trace format", "[python][format]") {
    uint8_t buf[4096];
    uint64_t natives[] = {0x401000, 0x401100, 0x52b9df};
    format::PythonFrame py[] = {{7, 77, 2}, {8, 14, 2}, {9, 3, 3}};
    format::ByteWriter w(buf, sizeof buf);
    format::encodeStack(w, 5, natives, 3, py, 3);
    format::ByteReader r({buf, w.size()});
    format::StackInfo s;
    REQUIRE(format::decodeStack(r, s));
    CHECK(s.depth == 3);
    REQUIRE(s.python_depth == 3);
    CHECK(s.python[0].code_id == 7);
    CHECK(s.python[0].instruction == 77);
    CHECK(s.python[2].position == 3);

    // A stack of an older tracer (no Python section) has none.
    format::ByteWriter w2(buf, sizeof buf);
    format::encodeStack(w2, 6, natives, 3);
    format::ByteReader r2({buf, w2.size()});
    REQUIRE(format::decodeStack(r2, s));
    CHECK(s.python_depth == 0);

    // More Python frames than a stack may carry: malformed, not a bound overrun.
    format::ByteWriter w3(buf, sizeof buf);
    w3.varint(1);
    w3.varint(0);
    w3.varint(format::kMaxPythonDepth + 1);
    format::ByteReader r3({buf, w3.size()});
    CHECK_FALSE(format::decodeStack(r3, s));

    format::PythonCodeInfo c;
    c.id = 3;
    c.table_format = format::PythonLineTable::Pairs310;
    c.first_line = 42;
    c.filename = "train.py";
    c.name = "Model.step";
    c.line_table = std::string("\x06\x01\x04\x00", 4);
    format::ByteWriter w4(buf, sizeof buf);
    format::encodePythonCode(w4, c);
    format::ByteReader r4({buf, w4.size()});
    format::PythonCodeInfo back;
    REQUIRE(format::decodePythonCode(r4, back));
    CHECK(back.id == 3);
    CHECK(back.table_format == format::PythonLineTable::Pairs310);
    CHECK(back.first_line == 42);
    CHECK(back.filename == "train.py");
    CHECK(back.name == "Model.step");
    CHECK(back.line_table == c.line_table);

    // Header and trailer: the Python block after the rank block, and its absence in older
    // traces.
    format::HeaderInfo h;
    h.rank = 3;
    h.python_version = 0x030c03f0;
    h.python_status = format::PythonStatus::Captured;
    format::ByteWriter w5(buf, sizeof buf);
    format::encodeHeader(w5, h);
    // The header read back from its first `size` bytes.
    auto decoded = [&](size_t size) {
        format::HeaderInfo out;
        format::ByteReader r({buf, size});
        REQUIRE(format::decodeHeader(r, out));
        return out;
    };
    const format::HeaderInfo hb = decoded(w5.size());
    CHECK(hb.rank == 3);
    CHECK(hb.python_version == 0x030c03f0);
    CHECK(hb.python_status == format::PythonStatus::Captured);
    // The command block after it (command_bytes 0 here: one byte), then nothing.
    const size_t command_block = 1;
    const format::HeaderInfo before_command = decoded(w5.size() - command_block);
    CHECK(before_command.python_version == 0x030c03f0);
    CHECK(before_command.command_bytes == 0);
    CHECK_FALSE(before_command.commandTruncated());
    // Without the Python block (a 4-byte varint and a 1-byte one): a trace written before it,
    // with the rank block.
    const format::HeaderInfo old_header = decoded(w5.size() - command_block - 5);
    CHECK(old_header.rank == 3);
    CHECK(old_header.python_version == 0);
    CHECK(old_header.python_status == format::PythonStatus::NotDetected);
    // Without either block (the rank block: three 1-byte svarints, an empty string).
    const format::HeaderInfo oldest = decoded(w5.size() - command_block - 5 - 4);
    CHECK(oldest.rank == -1);
    CHECK(oldest.python_status == format::PythonStatus::NotDetected);

    // A command line cut by the recorder: its whole length in the command block.
    h.command = "prog --arg";
    h.command_bytes = 70000;
    format::ByteWriter w7(buf, sizeof buf);
    format::encodeHeader(w7, h);
    format::ByteReader r7({buf, w7.size()});
    format::HeaderInfo cut;
    REQUIRE(format::decodeHeader(r7, cut));
    CHECK(cut.command == "prog --arg");
    CHECK(cut.command_bytes == 70000);
    CHECK(cut.commandTruncated());

    format::TrailerInfo t;
    t.python_status = format::PythonStatus::Failed;
    format::ByteWriter w6(buf, sizeof buf);
    format::encodeTrailer(w6, t);
    format::TrailerInfo tb;
    format::ByteReader r6({buf, w6.size()});
    REQUIRE(format::decodeTrailer(r6, tb));
    CHECK(tb.python_status == format::PythonStatus::Failed);
}
