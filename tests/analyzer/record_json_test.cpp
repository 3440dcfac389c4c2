// `dump`'s lines: each record written as text (writeRecordJson into a JsonTextSink, what
// the command does) must be the text of its Json tree (recordJson), for every record type,
// every optional member, text that needs escaping or is not UTF-8, and a record recovered
// from the ring. One event's line is pinned in full: it is what scripts read.
#include "base/json_sink.h"
#include "read/record_json.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace format = gmt::format;
using format::RecordTag;
using gmt::analyzer::Json;
using gmt::analyzer::JsonTextSink;
using gmt::analyzer::Record;
using gmt::analyzer::recordJson;
using gmt::analyzer::writeRecordJson;

namespace {

// Awkward text: a quote, a backslash, a control byte, valid and invalid UTF-8.
const std::string kOdd = std::string("a\"b\\c\x01 d\xc3\xa9 e\xff", 14);

format::Prologue prologue() {
    format::Prologue p{};
    p.format_version = 7;
    p.ring_slots = 4096;
    p.dropped_events = 3;
    p.flags = format::kPrologueOutOfMemory;
    return p;
}

// One record of every tag, with every optional member set where it has one.
std::vector<Record> everyRecord() {
    std::vector<Record> out;
    auto add = [&out](RecordTag tag) -> Record& {
        out.emplace_back();
        out.back().tag = tag;
        return out.back();
    };
    Record& h = add(RecordTag::Header);
    h.header.pid = 4242;
    h.header.driver_version = 13000;
    h.header.command = kOdd;
    h.header.command_bytes = 1 << 20;
    h.header.rank = -1;
    h.header.rank_source = "RANK";
    h.header.python_version = 0x030c01f0;
    h.header.python_status = format::PythonStatus::Captured;
    Record& d = add(RecordTag::Device);
    d.device.ordinal = 1;
    d.device.name = "NVIDIA H200";
    d.device.total_bytes = 150ull << 30;
    Record& m = add(RecordTag::Module);
    m.module.path = "/lib/x86_64-linux-gnu/libcuda.so.1";
    m.module.base = 0x7f1234560000;
    m.module.start = 0x7f1234561000;
    m.module.end = 0x7f1234569000;
    m.module.build_id = std::string("\xab\xcd\x00\x01", 4);
    Record& s = add(RecordTag::Stack);
    s.stack.id = 9;
    s.stack.depth = 3;
    s.stack.frames[0] = 0x401000;
    s.stack.frames[1] = 0;
    s.stack.frames[2] = ~uint64_t{0};
    s.stack.python_depth = 2;
    s.stack.python[0] = {1, 12, 3};
    s.stack.python[1] = {2, 0, 0};
    add(RecordTag::Stack).stack.id = 10; // no frames at all
    Record& c = add(RecordTag::PythonCode);
    c.python_code.id = 1;
    c.python_code.first_line = -1;
    c.python_code.filename = "/srv/train.py";
    c.python_code.name = kOdd;
    c.python_code.line_table = std::string("\x80\x00", 2);
    Record& e = add(RecordTag::Event);
    e.event.op = format::Op::VmmCreate;
    e.event.api = format::Api::cuMemCreate;
    e.event.kind = format::Kind::Vmm;
    e.event.result = -5;
    e.event.address = 0x7f0000000000;
    e.event.size = 2 << 20;
    e.event.actual_size = 4 << 20;
    e.event.handle = 0xa1;
    e.event.stream = 0x5;
    e.event.context = 0xc0;
    e.event.offset = 64;
    e.event.device_free = 1;
    e.event.device_total = 2;
    e.event.flags = format::kFlagHostLocated | format::kFlagImported;
    e.event.device = 3;
    e.event.tid = 100;
    e.event.time_ns = 10;
    e.event.stack_id = 9;
    e.from_ring = true;
    Record& b = add(RecordTag::Event);
    b.event.op = format::Op::Block;
    b.event.flags = format::kFlagInterpreterExiting;
    add(RecordTag::Event); // every optional member absent
    Record& t = add(RecordTag::Trailer);
    t.trailer.events = 9;
    t.trailer.exit_signal = 9;
    t.trailer.python_status = format::PythonStatus::Disabled;
    Record& p = add(RecordTag::Phase);
    p.phase.name = kOdd;
    p.phase.kind = format::PhaseKind::Push;
    Record& a = add(RecordTag::CachingAllocator);
    a.caching_allocator.status = format::CachingAllocatorStatus::Attached;
    a.caching_allocator.version = "2.11.0";
    a.caching_allocator.detail = kOdd;
    a.caching_allocator.config = "expandable_segments:True";
    Record& r = add(RecordTag::Recording);
    r.recording.change = format::RecordingChange::Resume;
    Record& g = add(RecordTag::AggregateSummary);
    g.aggregate.events = 1000;
    g.aggregate.over_budget = true;
    Record& st = add(RecordTag::SiteTotals);
    st.site_totals.stack = 9;
    st.site_totals.kind = static_cast<uint8_t>(format::Kind::Managed);
    add(RecordTag::PhaseTotals).phase_totals.frees = 5;
    add(RecordTag::FoldedPeak).folded_peak.bytes = 77;
    Record& fm = add(RecordTag::FoldedMark);
    fm.folded_mark.level = -3;
    fm.folded_mark.sites = {{1, -1024}, {2, 1LL << 40}};
    add(RecordTag::FoldedMark); // no sites
    return out;
}

std::string text(const Record& r) {
    std::string out;
    JsonTextSink sink(out, -1);
    writeRecordJson(r, prologue(), sink);
    return out;
}

} // namespace

TEST_CASE("dump's lines: each record's text is its tree's text, for every record type") {
    const std::vector<Record> records = everyRecord();
    std::vector<std::string> tags;
    for (const Record& r : records) {
        const Json tree = recordJson(r, prologue());
        INFO(gmt::analyzer::jsonText(tree));
        CHECK(text(r) == gmt::analyzer::jsonText(tree));
        CHECK(tree.is_object());
        tags.push_back(tree.value("record", ""));
    }
    // Every tag of the format has a line of its own name.
    for (const char* name :
         {"header", "device", "module", "stack", "python_code", "event", "trailer", "phase",
          "caching_allocator", "recording", "aggregate_summary", "site_totals", "phase_totals",
          "folded_peak", "folded_mark"}) {
        INFO(name);
        CHECK(std::count(tags.begin(), tags.end(), name) >= 1);
    }
}

TEST_CASE("dump's lines: records written one after another into one text, one per line") {
    // What the command does: one sink, a newline after each record.
    std::string out;
    JsonTextSink sink(out, -1);
    std::string expected;
    for (const Record& r : everyRecord()) {
        writeRecordJson(r, prologue(), sink);
        out += '\n';
        expected += gmt::analyzer::jsonText(recordJson(r, prologue())) + '\n';
    }
    CHECK(out == expected);
}

TEST_CASE("dump's lines: an event with every member, pinned") {
    const Record e = everyRecord().at(6);
    REQUIRE(e.tag == RecordTag::Event);
    CHECK(text(e) ==
          R"({"record":"event","event":"vmm_create","api":"cuMemCreate","kind":"vmm",)"
          R"("result":-5,"address":"0x7f0000000000","size":2097152,"device":3,"tid":100,)"
          R"("time_ns":10,"stack":9,"actual_size":4194304,"handle":"0xa1","stream":"0x5",)"
          R"("context":"0xc0","offset":64,"device_free":1,"device_total":2,"flags":)" +
              std::to_string(format::kFlagHostLocated | format::kFlagImported) +
              R"(,"host_located":true,"imported":true,"recovered":true})");
    const Record s = everyRecord().at(3);
    CHECK(text(s) == R"({"record":"stack","id":9,"frames":["0x401000","0x0","0xffffffffffffffff"],)"
                     R"("python":[{"code":1,"instruction":12,"position":3},)"
                     R"({"code":2,"instruction":0,"position":0}]})");
}
