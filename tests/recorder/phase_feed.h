// Feeds the recorder's per-phase accounting (preload/phase_accounting.h) records in ring
// order, as the log writer does: for its unit tests (phase_accounting_test.cpp,
// phase_accounting_oom_test.cpp).
#pragma once

#include "phase_accounting.h"
#include "trace_builder.h"

#include <catch2/catch.hpp>

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/record_codec.h>

#include <string>

namespace gmt::test {

using gmt::format::Api;
using gmt::format::BlockAction;
using gmt::format::Event;
using gmt::format::Kind;
using gmt::format::Op;
using gmt::format::PhaseKind;
using gmt::preload::PhaseAccount;
using gmt::preload::PhaseAccounting;
namespace phase_accounting = gmt::preload::phase_accounting;

inline constexpr uint64_t kMiB = 1 << 20;
inline constexpr uint64_t kSeg = 0x10000000;   // a 20 MiB segment of the large pool
inline constexpr uint64_t kSmall = 0x20000000; // a 2 MiB segment of the small pool

inline constexpr uint32_t kTest = 100; // the accounted thread
inline constexpr uint32_t kOther = 200;

// Feeds records at consecutive ring positions.
class Feed {
  public:
    Feed() { phase_accounting::accountThread(kTest); }

    uint64_t phase(PhaseKind kind, uint32_t tid = kTest) {
        gmt::format::PhaseInfo p;
        p.kind = kind;
        p.tid = tid;
        p.name = kind == PhaseKind::Pop ? "" : "test";
        uint8_t body[256], framed[300];
        gmt::format::ByteWriter w(body, sizeof body);
        gmt::format::encodePhase(w, p);
        gmt::format::ByteWriter f(framed, sizeof framed);
        gmt::format::appendRecord(f, gmt::format::RecordTag::Phase, body, w.size());
        accounting.onRecord(pos_, framed, static_cast<uint32_t>(f.size()));
        return pos_++;
    }
    void event(const Event& e) {
        if (accounting.wantsEvents()) { // the writer hands events over only then
            accounting.onEvent(e);
        }
        ++pos_;
    }
    // A caching allocator's block event (PyTorch's trace tracker).
    void block(BlockAction action, uint64_t address, uint64_t size, uint32_t stack = 7,
               uint32_t flags = 0) {
        Event e = Ev::make(pos_, Op::Block, static_cast<Api>(action), Kind::Block, address, size,
                           stack, 0);
        e.flags = static_cast<uint32_t>(gmt::format::BlockSource::PyTorch) | flags;
        event(e);
    }
    // A segment as PyTorch takes one: its cudaMalloc, then segment_alloc.
    void segment(uint64_t address, uint64_t size) {
        alloc(address, size, 9);
        block(BlockAction::SegmentAlloc, address, size, 9);
    }
    // The allocator's settings (a CachingAllocator record).
    void settings(const std::string& config) {
        gmt::format::CachingAllocatorInfo info;
        info.status = gmt::format::CachingAllocatorStatus::Attached;
        info.config = config;
        uint8_t body[512], framed[600];
        gmt::format::ByteWriter w(body, sizeof body);
        gmt::format::encodeCachingAllocator(w, info);
        gmt::format::ByteWriter f(framed, sizeof framed);
        gmt::format::appendRecord(f, gmt::format::RecordTag::CachingAllocator, body, w.size());
        accounting.onRecord(pos_++, framed, static_cast<uint32_t>(f.size()));
    }
    void alloc(uint64_t address, uint64_t size, uint32_t stack = 1) {
        event(Ev::alloc(pos_, address, size, Api::cudaMalloc, Kind::Device, stack));
    }
    void free(uint64_t address) { event(Ev::free(pos_, address)); }
    PhaseAccount closed(uint64_t pop) {
        PhaseAccount a;
        REQUIRE(accounting.take(pop, a));
        return a;
    }

    PhaseAccounting accounting;

  private:
    uint64_t pos_ = 0;
};

} // namespace gmt::test
