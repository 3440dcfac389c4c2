#include "read/python_code.h"

namespace gmt::analyzer {
namespace {

// 3.10 (Objects/lnotab_notes.txt there): pairs of (byte offset delta: u8, line delta: s8);
// -128 marks a range without a line; empty ranges only move the line. Offsets in bytes.
int linePairs310(const std::string& table, int first_line, uint32_t instruction) {
    const uint64_t address = uint64_t{instruction} * 2;
    uint64_t start = 0, end = 0;
    int computed = first_line, line = -1;
    for (size_t i = 0; i + 1 < table.size(); i += 2) {
        start = end;
        end += static_cast<uint8_t>(table[i]);
        const auto delta = static_cast<int8_t>(table[i + 1]);
        if (delta == -128) {
            line = -1;
        } else {
            computed += delta;
            line = computed;
        }
        if (end > start && address >= start && address < end) {
            return line > 0 ? line : 0;
        }
    }
    return 0;
}

// 3.11+ location table (Objects/locations.md there): entries start with a byte whose top
// bit is set: 4 bits of kind, 3 bits of (length in code units - 1); the kind says how the
// line moves and which bytes follow. Numbers are in 6-bit chunks, 0x40 meaning "more".
class LocationReader {
  public:
    explicit LocationReader(const std::string& table)
        : p_(reinterpret_cast<const uint8_t*>(table.data())), end_(p_ + table.size()) {}

    bool atEnd() const { return p_ >= end_; }
    uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
    uint32_t varint() {
        uint32_t b = byte(), value = b & 63;
        for (uint32_t shift = 6; (b & 64) && shift < 32 && !atEnd(); shift += 6) {
            b = byte();
            value |= (b & 63) << shift;
        }
        return value;
    }
    int svarint() {
        uint32_t u = varint();
        return (u & 1) ? -static_cast<int>(u >> 1) : static_cast<int>(u >> 1);
    }
    // Past the rest of the entry: to the next byte with the top bit set.
    void skipEntry() {
        while (p_ < end_ && !(*p_ & 0x80)) {
            ++p_;
        }
    }

  private:
    const uint8_t* p_;
    const uint8_t* end_;
};

int lineLocations311(const std::string& table, int first_line, uint32_t instruction) {
    LocationReader r(table);
    int line = first_line;
    uint64_t address = 0;
    while (!r.atEnd()) {
        const uint8_t first = r.byte();
        if (!(first & 0x80)) {
            return 0; // not the start of an entry: the table is not one
        }
        const uint32_t kind = (first >> 3) & 15, length = (first & 7) + 1;
        bool has_line = true;
        if (kind == 15) {
            has_line = false; // no location
        } else if (kind == 13 || kind == 14) {
            line += r.svarint(); // no columns / long form: the delta comes first
        } else if (kind >= 10) {
            line += static_cast<int>(kind) - 10; // one-line forms
        }                                        // else short forms: same line
        r.skipEntry();
        if (instruction < address + length) {
            return has_line && line > 0 ? line : 0;
        }
        address += length;
    }
    return 0;
}

} // namespace

std::string pythonVersionText(uint32_t hex) {
    if (hex == 0) {
        return "";
    }
    std::string out = std::to_string(hex >> 24) + "." + std::to_string((hex >> 16) & 0xff) + "." +
                      std::to_string((hex >> 8) & 0xff);
    const uint32_t level = (hex >> 4) & 0xf;
    if (level == 0xa || level == 0xb || level == 0xc) {
        out += level == 0xa ? "a" : level == 0xb ? "b" : "rc";
        out += std::to_string(hex & 0xf);
    }
    return out;
}

int pythonLine(const format::PythonCodeInfo& code, uint32_t instruction) {
    switch (code.table_format) {
    case format::PythonLineTable::Pairs310:
        return linePairs310(code.line_table, code.first_line, instruction);
    case format::PythonLineTable::Locations311:
        return lineLocations311(code.line_table, code.first_line, instruction);
    }
    return 0;
}

PythonSourceFrame
resolvePythonFrame(const format::PythonFrame& frame,
                   const std::unordered_map<uint32_t, format::PythonCodeInfo>& codes) {
    PythonSourceFrame out;
    auto it = codes.find(frame.code_id);
    if (it == codes.end()) {
        out.function = "<unknown code " + std::to_string(frame.code_id) + ">";
        return out;
    }
    out.function = it->second.name;
    out.file = it->second.filename;
    out.line = pythonLine(it->second, frame.instruction);
    return out;
}

std::vector<MergedFrame> mergeFrames(uint32_t native_depth,
                                     const std::vector<format::PythonFrame>& python) {
    std::vector<MergedFrame> out;
    out.reserve(native_depth + python.size());
    size_t next = 0; // Python frames are stored innermost first, so positions ascend
    for (uint32_t i = 0; i <= native_depth; ++i) {
        bool replaced = false;
        while (next < python.size() && python[next].position <= i) {
            out.push_back({true, static_cast<uint32_t>(next++)});
            replaced = true;
        }
        if (i < native_depth && !replaced) {
            out.push_back({false, i});
        }
    }
    while (next < python.size()) {
        out.push_back({true, static_cast<uint32_t>(next++)});
    }
    return out;
}

} // namespace gmt::analyzer
