#include "trace_spec.h"

#include "support/trace_builder.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace gmt::fuzz {

namespace tf = gmt::format;

namespace {

constexpr char kMagic[6] = {'G', 'S', 'P', 'E', 'C', '1'};
constexpr uint64_t kDeviceBase = 0x7f0000000000ull;

void putU64(std::vector<uint8_t>& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        out.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
}

class Cursor {
  public:
    Cursor(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
    bool has(size_t n) const { return static_cast<size_t>(end_ - p_) >= n; }
    bool atEnd() const { return p_ == end_; }
    uint8_t u8() { return *p_++; }
    uint16_t u16() {
        uint16_t v = static_cast<uint16_t>(p_[0] | (p_[1] << 8));
        p_ += 2;
        return v;
    }
    uint64_t u64() {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) {
            v |= uint64_t{p_[i]} << (8 * i);
        }
        p_ += 8;
        return v;
    }
    void copy(void* out, size_t n) {
        if (n > 0) {
            std::memcpy(out, p_, n);
        }
        p_ += n;
    }

  private:
    const uint8_t* p_;
    const uint8_t* end_;
};

// Bytes of the record as it is framed (tag, varint length, body).
std::vector<uint8_t> encodeRecord(uint8_t tag, const uint8_t* body, size_t size) {
    std::vector<uint8_t> rec(size + 16);
    tf::ByteWriter w(rec.data(), rec.size());
    w.byte(tag);
    w.varint(size);
    w.bytes(body, size);
    rec.resize(w.size());
    return rec;
}

uint64_t positionsOf(size_t encoded_bytes) {
    return std::max<uint64_t>(1, tf::recordSlots(static_cast<uint32_t>(encoded_bytes)));
}

uint32_t ringSlots(const TraceSpec& spec) {
    return 1u << std::clamp<uint8_t>(spec.ring_slots_log2, 10, 12);
}

// Builds the log (and reports the positions its frames cover).
std::vector<uint8_t> buildLog(const TraceSpec& spec, uint64_t& covered) {
    std::vector<uint8_t> log;
    std::vector<uint8_t> payload;
    uint32_t records = 0;
    uint64_t positions = 0;
    uint64_t claimed = 0; // positions the frames claim beyond their records
    covered = 0;
    tf::EventCoder coder{};
    std::vector<uint8_t> scratch(512);
    auto endFrame = [&](const LogItem* end) -> bool {
        const FrameDamage damage = end ? end->damage : FrameDamage::None;
        if (end) {
            claimed += end->skip;
        }
        tf::FrameHeader h{};
        h.magic = tf::kFrameMagic;
        h.payload_size = static_cast<uint32_t>(payload.size());
        h.record_count = records + (damage == FrameDamage::RecordCount ? 1 : 0);
        h.end_seq = positions + claimed;
        h.checksum = tf::frameChecksum(h, payload.data());
        if (damage == FrameDamage::Checksum) {
            if (payload.empty()) {
                h.checksum ^= 1;
            } else {
                payload[payload.size() / 2] ^= 0x40;
            }
        }
        records = 0;
        if (damage == FrameDamage::ZeroHeader) {
            log.insert(log.end(), sizeof h, 0);
            payload.clear();
            return false;
        }
        const auto* hb = reinterpret_cast<const uint8_t*>(&h);
        log.insert(log.end(), hb, hb + sizeof h);
        if (damage == FrameDamage::TornEnd) {
            log.insert(log.end(), payload.begin(), payload.begin() + payload.size() / 2);
            payload.clear();
            return false;
        }
        log.insert(log.end(), payload.begin(), payload.end());
        payload.clear();
        if (damage == FrameDamage::None) {
            covered = h.end_seq;
        }
        return damage == FrameDamage::None;
    };
    for (const LogItem& item : spec.log) {
        if (item.type == LogItem::Type::FrameEnd) {
            if (!endFrame(&item)) {
                return log; // nothing after a damaged frame is read: stop here
            }
            continue;
        }
        if (item.type == LogItem::Type::Event) {
            tf::ByteWriter w(scratch.data(), scratch.size());
            tf::encodeEventBody(w, item.event, coder);
            auto rec =
                encodeRecord(static_cast<uint8_t>(tf::RecordTag::Event), scratch.data(), w.size());
            payload.insert(payload.end(), rec.begin(), rec.end());
            positions += 1;
        } else {
            auto rec = encodeRecord(item.tag, item.body.data(), item.body.size());
            payload.insert(payload.end(), rec.begin(), rec.end());
            positions += positionsOf(rec.size());
        }
        ++records;
        if (payload.size() > (1u << 20)) {
            endFrame(nullptr); // frames stay far below the format's limit
        }
    }
    if (records > 0) {
        endFrame(nullptr);
    }
    return log;
}

const uint64_t kInteresting[] = {
    0,          1,          2,           7,          4095,       4096,           2u << 20,
    1ull << 32, 1ull << 40, kDeviceBase, 1ull << 62, 1ull << 63, UINT64_MAX - 1, UINT64_MAX};

uint64_t interesting(std::mt19937_64& rng) {
    return kInteresting[rng() % std::size(kInteresting)];
}

std::vector<const tf::Event*> eventsOf(const TraceSpec& spec) {
    std::vector<const tf::Event*> out;
    for (const LogItem& item : spec.log) {
        if (item.type == LogItem::Type::Event) {
            out.push_back(&item.event);
        }
    }
    return out;
}

std::string randomText(std::mt19937_64& rng, size_t max) {
    std::string s(rng() % (max + 1), 'a');
    for (char& c : s) {
        c = static_cast<char>('a' + rng() % 26);
    }
    return s;
}

template <typename Encode> LogItem recordItem(tf::RecordTag tag, Encode&& encode) {
    std::vector<uint8_t> body(8192);
    tf::ByteWriter w(body.data(), body.size());
    encode(w);
    body.resize(w.size());
    LogItem item;
    item.type = LogItem::Type::Record;
    item.tag = static_cast<uint8_t>(tag);
    item.body = std::move(body);
    return item;
}

LogItem eventItem(const tf::Event& e) {
    LogItem item;
    item.type = LogItem::Type::Event;
    item.event = e;
    return item;
}

tf::Api apiFor(tf::Op op, tf::Kind kind) {
    switch (op) {
    case tf::Op::Alloc:
        return kind == tf::Kind::Pool         ? tf::Api::cudaMallocAsync
               : kind == tf::Kind::HostPinned ? tf::Api::cudaMallocHost
               : kind == tf::Kind::Array      ? tf::Api::cudaMallocArray
               : kind == tf::Kind::Managed    ? tf::Api::cudaMallocManaged
                                              : tf::Api::cudaMalloc;
    case tf::Op::Free:
        return kind == tf::Kind::Pool         ? tf::Api::cudaFreeAsync
               : kind == tf::Kind::HostPinned ? tf::Api::cudaFreeHost
               : kind == tf::Kind::Array      ? tf::Api::cudaFreeArray
                                              : tf::Api::cudaFree;
    case tf::Op::VmmReserve:
        return tf::Api::cuMemAddressReserve;
    case tf::Op::VmmAddressFree:
        return tf::Api::cuMemAddressFree;
    case tf::Op::VmmCreate:
        return tf::Api::cuMemCreate;
    case tf::Op::VmmRelease:
        return tf::Api::cuMemRelease;
    case tf::Op::VmmMap:
        return tf::Api::cuMemMap;
    case tf::Op::VmmUnmap:
        return tf::Api::cuMemUnmap;
    case tf::Op::Teardown:
        return tf::Api::cudaDeviceReset;
    case tf::Op::CtxCreate:
        return tf::Api::cuCtxCreate_v2;
    case tf::Op::PoolCreate:
        return tf::Api::cudaMemPoolCreate;
    case tf::Op::PoolDestroy:
        return tf::Api::cudaMemPoolDestroy;
    case tf::Op::PoolTrim:
        return tf::Api::cudaMemPoolTrimTo;
    case tf::Op::VmmRetain:
        return tf::Api::cuMemRetainAllocationHandle;
    case tf::Op::Block:
        return static_cast<tf::Api>(tf::BlockAction::Alloc);
    }
    return tf::Api::Unknown;
}

void mutateEventField(tf::Event& e, std::mt19937_64& rng, const TraceSpec& spec) {
    auto events = eventsOf(spec);
    const tf::Event* other = events.empty() ? nullptr : events[rng() % events.size()];
    auto value = [&](uint64_t current, uint64_t other_value) -> uint64_t {
        switch (rng() % 5) {
        case 0:
            return interesting(rng);
        case 1:
            return other ? other_value : current;
        case 2:
            return current + static_cast<uint64_t>(static_cast<int64_t>(rng() % 9) - 4);
        case 3:
            return current + (uint64_t{4096} << (rng() % 12));
        default:
            return rng();
        }
    };
    const tf::Event& o = other ? *other : e;
    switch (rng() % 18) {
    case 0:
        e.time_ns = value(e.time_ns, o.time_ns);
        break;
    case 1:
        e.address = value(e.address, o.address);
        break;
    case 2:
        e.size = value(e.size, o.size);
        break;
    case 3:
        e.actual_size = value(e.actual_size, o.actual_size);
        break;
    case 4:
        e.handle = value(e.handle, o.handle);
        break;
    case 5:
        e.stream = value(e.stream, o.stream);
        break;
    case 6:
        e.context = value(e.context, o.context);
        break;
    case 7:
        e.offset = value(e.offset, o.offset);
        break;
    case 8:
        e.device_free = value(e.device_free, o.device_free);
        break;
    case 9:
        e.device_total = value(e.device_total, o.device_total);
        break;
    case 10:
        e.flags = static_cast<uint32_t>(value(e.flags, o.flags));
        break;
    case 11:
        e.stack_id = static_cast<uint32_t>(rng() % 4 == 0 ? rng() : rng() % 24);
        break;
    case 12:
        e.tid = static_cast<uint32_t>(value(e.tid, o.tid));
        break;
    case 13:
        e.result = rng() % 2 ? 0 : static_cast<int32_t>(rng() % 4 ? 2 : rng());
        break;
    case 14:
        e.device = static_cast<int16_t>(rng() % 4 == 0 ? rng() : static_cast<int>(rng() % 5) - 1);
        break;
    case 15:
        // Valid ops mostly; 0 and 15 exercise the decoder's refusal.
        e.op = static_cast<tf::Op>(rng() % 8 == 0 ? rng() % 16 : 1 + rng() % 14);
        break;
    case 16:
        e.api = rng() % 2 ? apiFor(e.op, e.kind) : static_cast<tf::Api>(rng() % 90);
        break;
    default:
        e.kind = static_cast<tf::Kind>(rng() % 8 == 0 ? rng() % 256 : rng() % 7);
        break;
    }
}

size_t pickLogIndex(std::mt19937_64& rng, const TraceSpec& spec) {
    return spec.log.empty() ? 0 : rng() % spec.log.size();
}

void mutateRecords(TraceSpec& spec, std::mt19937_64& rng,
                   size_t (*mutate_bytes)(uint8_t*, size_t, size_t)) {
    const unsigned roll = rng() % 100;
    if (roll < 40) {
        std::vector<LogItem*> events;
        for (LogItem& item : spec.log) {
            if (item.type == LogItem::Type::Event) {
                events.push_back(&item);
            }
        }
        if (!events.empty()) {
            mutateEventField(events[rng() % events.size()]->event, rng, spec);
            return;
        }
    }
    if (roll < 55) {
        tf::Event e = randomEvent(rng, spec);
        spec.log.insert(spec.log.begin() + static_cast<long>(pickLogIndex(rng, spec)),
                        eventItem(e));
    } else if (roll < 63) {
        if (!spec.log.empty()) {
            spec.log.erase(spec.log.begin() + static_cast<long>(pickLogIndex(rng, spec)));
        }
    } else if (roll < 68) {
        if (!spec.log.empty() && spec.log.size() < 4096) {
            size_t i = pickLogIndex(rng, spec);
            LogItem copy = spec.log[i];
            spec.log.insert(spec.log.begin() + static_cast<long>(pickLogIndex(rng, spec)),
                            std::move(copy));
        }
    } else if (roll < 73) {
        if (spec.log.size() >= 2) {
            std::swap(spec.log[pickLogIndex(rng, spec)], spec.log[pickLogIndex(rng, spec)]);
        }
    } else if (roll < 81) {
        spec.log.insert(spec.log.begin() + static_cast<long>(pickLogIndex(rng, spec)),
                        randomRecord(rng, spec));
    } else if (roll < 86) {
        std::vector<LogItem*> records;
        for (LogItem& item : spec.log) {
            if (item.type == LogItem::Type::Record) {
                records.push_back(&item);
            }
        }
        if (!records.empty() && mutate_bytes) {
            LogItem& r = *records[rng() % records.size()];
            size_t size = r.body.size();
            r.body.resize(size + 64);
            r.body.resize(mutate_bytes(r.body.data(), size, r.body.size()));
            if (rng() % 16 == 0) {
                r.tag = static_cast<uint8_t>(rng());
            }
        }
    } else if (roll < 94) {
        LogItem end;
        end.type = LogItem::Type::FrameEnd;
        if (rng() % 4 == 0) {
            end.damage = static_cast<FrameDamage>(rng() % static_cast<int>(FrameDamage::Count));
        }
        if (rng() % 4 == 0) {
            end.skip = static_cast<uint16_t>(rng() % 3 == 0 ? rng() : rng() % 8);
        }
        spec.log.insert(spec.log.begin() + static_cast<long>(pickLogIndex(rng, spec)), end);
    } else if (roll < 97) {
        spec.dropped_events = rng() % 2 ? 0 : (rng() % 3 == 0 ? interesting(rng) : rng() % 100);
    } else {
        spec.ring_slots_log2 = static_cast<uint8_t>(10 + rng() % 3);
    }
}

void mutateRing(TraceSpec& spec, std::mt19937_64& rng,
                size_t (*mutate_bytes)(uint8_t*, size_t, size_t)) {
    const uint64_t covered = logPositions(spec);
    const uint64_t slots = ringSlots(spec);
    auto nearby = [&]() -> uint64_t {
        switch (rng() % 6) {
        case 0:
            return covered > 3 ? covered - 1 - rng() % 3 : 0;
        case 1:
            return covered + slots + rng() % 4; // wrapped past a full ring
        case 2:
            return covered + rng() % slots;
        default:
            return covered + rng() % 8;
        }
    };
    const unsigned roll = rng() % 100;
    if (roll < 25) {
        RingItem item;
        item.position = nearby();
        item.slot.type = tf::SlotType::Event;
        auto events = eventsOf(spec);
        tf::Event e =
            events.empty() || rng() % 2 ? randomEvent(rng, spec) : *events[rng() % events.size()];
        if (rng() % 3 == 0) {
            e.op = e.op == tf::Op::Alloc ? tf::Op::Free : tf::Op::Alloc;
            e.api = apiFor(e.op, e.kind);
        }
        std::memcpy(item.slot.payload, &e, sizeof e);
        item.committed = rng() % 8 != 0;
        spec.ring.push_back(item);
    } else if (roll < 40) {
        LogItem rec = randomRecord(rng, spec);
        addRingRecord(spec, nearby(), rec.tag, rec.body,
                      rng() % 4 == 0 ? 1 + static_cast<uint32_t>(rng() % 3) : 0);
    } else if (roll < 65) {
        if (spec.ring.empty()) {
            return;
        }
        RingItem& item = spec.ring[rng() % spec.ring.size()];
        switch (rng() % 6) {
        case 0:
            item.position += static_cast<uint64_t>(static_cast<int64_t>(rng() % 5) - 2);
            break;
        case 1:
            item.position += rng() % 2 ? slots : -slots;
            break;
        case 2:
            item.committed = !item.committed;
            item.slot.seq = rng() % 2 ? 0 : rng();
            break;
        case 3:
            item.slot.type = static_cast<tf::SlotType>(rng() % 5);
            break;
        case 4:
            item.slot.length = static_cast<uint32_t>(rng() % 3 == 0 ? rng() : rng() % 600);
            break;
        default:
            if (mutate_bytes) {
                mutate_bytes(item.slot.payload, sizeof item.slot.payload, sizeof item.slot.payload);
            }
            break;
        }
    } else if (roll < 75) {
        if (spec.ring.empty()) {
            return;
        }
        size_t i = rng() % spec.ring.size();
        if (rng() % 2) {
            spec.ring.erase(spec.ring.begin() + static_cast<long>(i));
        } else if (spec.ring.size() < 4096) {
            RingItem copy = spec.ring[i];
            copy.position += 1 + rng() % 3;
            spec.ring.push_back(copy);
        }
    } else if (roll < 85) {
        LogItem end;
        end.type = LogItem::Type::FrameEnd;
        end.damage = static_cast<FrameDamage>(rng() % static_cast<int>(FrameDamage::Count));
        end.skip = static_cast<uint16_t>(rng() % 4 == 0 ? rng() % slots : 0);
        spec.log.insert(spec.log.begin() + static_cast<long>(pickLogIndex(rng, spec)), end);
    } else {
        mutateRecords(spec, rng, mutate_bytes);
    }
}

} // namespace

std::vector<uint8_t> serialize(const TraceSpec& spec) {
    std::vector<uint8_t> out(kMagic, kMagic + sizeof kMagic);
    out.push_back(spec.ring_slots_log2);
    putU64(out, spec.dropped_events);
    for (const LogItem& item : spec.log) {
        out.push_back(static_cast<uint8_t>(item.type));
        switch (item.type) {
        case LogItem::Type::Event: {
            const auto* b = reinterpret_cast<const uint8_t*>(&item.event);
            out.insert(out.end(), b, b + sizeof item.event);
            break;
        }
        case LogItem::Type::Record: {
            const size_t n = std::min<size_t>(item.body.size(), 0xffff);
            out.push_back(item.tag);
            out.push_back(static_cast<uint8_t>(n));
            out.push_back(static_cast<uint8_t>(n >> 8));
            out.insert(out.end(), item.body.begin(), item.body.begin() + static_cast<long>(n));
            break;
        }
        case LogItem::Type::FrameEnd:
            out.push_back(static_cast<uint8_t>(item.damage));
            out.push_back(static_cast<uint8_t>(item.skip));
            out.push_back(static_cast<uint8_t>(item.skip >> 8));
            break;
        }
    }
    for (const RingItem& item : spec.ring) {
        out.push_back('S');
        putU64(out, item.position);
        out.push_back(item.committed ? 1 : 0);
        const auto* b = reinterpret_cast<const uint8_t*>(&item.slot);
        out.insert(out.end(), b, b + sizeof item.slot);
    }
    return out;
}

bool deserialize(const uint8_t* data, size_t size, TraceSpec& spec) {
    spec = TraceSpec{};
    Cursor c(data, size);
    if (!c.has(sizeof kMagic + 9) || std::memcmp(data, kMagic, sizeof kMagic) != 0) {
        return false;
    }
    uint8_t magic[sizeof kMagic];
    c.copy(magic, sizeof magic);
    spec.ring_slots_log2 = c.u8();
    spec.dropped_events = c.u64();
    while (!c.atEnd()) {
        const uint8_t type = c.u8();
        if (type == 'E' && c.has(sizeof(tf::Event))) {
            LogItem item;
            c.copy(&item.event, sizeof item.event);
            spec.log.push_back(item);
        } else if (type == 'R' && c.has(3)) {
            LogItem item;
            item.type = LogItem::Type::Record;
            item.tag = c.u8();
            const uint16_t n = c.u16();
            if (!c.has(n)) {
                break;
            }
            item.body.resize(n);
            c.copy(item.body.data(), n);
            spec.log.push_back(std::move(item));
        } else if (type == 'F' && c.has(3)) {
            LogItem item;
            item.type = LogItem::Type::FrameEnd;
            item.damage = static_cast<FrameDamage>(c.u8() % static_cast<int>(FrameDamage::Count));
            item.skip = c.u16();
            spec.log.push_back(item);
        } else if (type == 'S' && c.has(9 + sizeof(tf::Slot))) {
            RingItem item;
            item.position = c.u64();
            item.committed = c.u8() != 0;
            c.copy(&item.slot, sizeof item.slot);
            spec.ring.push_back(item);
        } else {
            break;
        }
    }
    return true;
}

uint64_t logPositions(const TraceSpec& spec) {
    uint64_t covered = 0;
    buildLog(spec, covered);
    return covered;
}

std::vector<uint8_t> emptyTrace(uint32_t ring_slots, uint64_t dropped_events) {
    std::vector<uint8_t> file(tf::kPrologueSize + size_t{ring_slots} * tf::kSlotSize, 0);
    const tf::Prologue p = test::TraceBuilder::prologue(ring_slots, dropped_events);
    std::memcpy(file.data(), &p, sizeof p);
    return file;
}

std::vector<uint8_t> buildTrace(const TraceSpec& spec) {
    const uint32_t slots = ringSlots(spec);
    std::vector<uint8_t> file = emptyTrace(slots, spec.dropped_events);
    auto* ring = reinterpret_cast<tf::Slot*>(file.data() + tf::kPrologueSize);
    for (const RingItem& item : spec.ring) {
        tf::Slot& s = ring[item.position & (slots - 1)];
        s = item.slot;
        if (item.committed) {
            s.seq = item.position + 1;
        }
    }
    uint64_t covered = 0;
    std::vector<uint8_t> log = buildLog(spec, covered);
    file.insert(file.end(), log.begin(), log.end());
    return file;
}

void addRingRecord(TraceSpec& spec, uint64_t position, uint8_t tag,
                   const std::vector<uint8_t>& body, uint32_t omit) {
    std::vector<uint8_t> rec = encodeRecord(tag, body.data(), body.size());
    const uint64_t parts = positionsOf(rec.size());
    for (uint64_t part = 0; part < parts; ++part) {
        RingItem item;
        item.position = position + part;
        tf::fillRecordSlot(item.slot, rec.data(), static_cast<uint32_t>(rec.size()),
                           static_cast<uint32_t>(part));
        item.committed = !(part != 0 && part == omit);
        spec.ring.push_back(item);
    }
}

tf::Event randomEvent(std::mt19937_64& rng, const TraceSpec& spec) {
    auto events = eventsOf(spec);
    const tf::Event* last = events.empty() ? nullptr : events.back();
    const tf::Event* other = events.empty() ? nullptr : events[rng() % events.size()];
    tf::Event e;
    static const tf::Op kOps[] = {tf::Op::Alloc,     tf::Op::Alloc,       tf::Op::Alloc,
                                  tf::Op::Free,      tf::Op::Free,        tf::Op::Free,
                                  tf::Op::VmmCreate, tf::Op::VmmRelease,  tf::Op::VmmMap,
                                  tf::Op::VmmUnmap,  tf::Op::VmmReserve,  tf::Op::VmmAddressFree,
                                  tf::Op::Teardown,  tf::Op::CtxCreate,   tf::Op::PoolCreate,
                                  tf::Op::PoolTrim,  tf::Op::PoolDestroy, tf::Op::VmmRetain,
                                  tf::Op::Block,     tf::Op::Block,       tf::Op::Block};
    e.op = kOps[rng() % std::size(kOps)];
    e.kind =
        e.op == tf::Op::Alloc || e.op == tf::Op::Free
            ? static_cast<tf::Kind>(1 + rng() % 5)
            : ((e.op >= tf::Op::VmmReserve && e.op <= tf::Op::VmmUnmap) || e.op == tf::Op::VmmRetain
                   ? tf::Kind::Vmm
                   : tf::Kind::None);
    e.api = apiFor(e.op, e.kind);
    if (e.op == tf::Op::Block) {
        // Every action, and now and then one no recorder writes.
        e.kind = tf::Kind::Block;
        e.api = static_cast<tf::Api>(rng() % 12);
    }
    e.time_ns = (last ? last->time_ns : 1000) + rng() % 1000;
    // Addresses and handles mostly reused, so frees, maps and teardowns meet something.
    e.address = other && rng() % 2 ? other->address : kDeviceBase + (rng() % 64) * 4096;
    e.handle = other && rng() % 2 ? other->handle : 0xa0 + rng() % 8;
    e.size = rng() % 4 == 0 ? interesting(rng) : 1 + rng() % (8u << 20);
    e.context = rng() % 3 == 0 ? 0 : 0xc0 + rng() % 4;
    e.device = static_cast<int16_t>(static_cast<int>(rng() % 4) - 1);
    e.stack_id = static_cast<uint32_t>(rng() % 6);
    e.tid = 100 + static_cast<uint32_t>(rng() % 3);
    e.result = rng() % 10 == 0 ? 2 : 0;
    if (e.result != 0) {
        e.device_total = 80ull << 30;
        e.device_free = rng() % (80ull << 30);
    }
    return e;
}

LogItem randomRecord(std::mt19937_64& rng, const TraceSpec& spec) {
    (void)spec;
    switch (rng() % 8) {
    case 0:
        return recordItem(tf::RecordTag::Header, [&](tf::ByteWriter& w) {
            tf::HeaderInfo h;
            h.pid = static_cast<uint32_t>(rng());
            h.start_mono_ns = rng() % 2 ? 0 : rng();
            h.stack_depth = static_cast<uint32_t>(rng() % 300);
            h.granularity = rng() % 2 ? 2u << 20 : interesting(rng);
            h.command = randomText(rng, 40);
            h.executable = "/bin/" + randomText(rng, 10);
            tf::encodeHeader(w, h);
        });
    case 1:
        return recordItem(tf::RecordTag::Device, [&](tf::ByteWriter& w) {
            tf::DeviceInfo d;
            d.ordinal =
                rng() % 4 == 0 ? static_cast<int32_t>(rng()) : static_cast<int>(rng() % 5) - 1;
            d.total_bytes = rng() % 2 ? 80ull << 30 : interesting(rng);
            d.granularity = rng() % 2 ? 2u << 20 : interesting(rng);
            d.name = randomText(rng, 20);
            tf::encodeDevice(w, d);
        });
    case 2:
        return recordItem(tf::RecordTag::Module, [&](tf::ByteWriter& w) {
            tf::ModuleInfo m;
            m.start = rng() % 2 ? 0x400000 + (rng() % 16) * 0x10000 : rng();
            m.base = rng() % 2 ? m.start : rng();
            m.end = m.start + (rng() % 2 ? 0x10000 : rng());
            m.path = "/lib/" + randomText(rng, 12) + ".so";
            m.build_id = randomText(rng, 20);
            tf::encodeModule(w, m);
        });
    case 3:
    case 4: {
        std::vector<uint64_t> frames(rng() % 40);
        for (uint64_t& f : frames) {
            f = rng() % 2 ? 0x400000 + rng() % 0x100000 : rng();
        }
        const uint32_t id = static_cast<uint32_t>(rng() % 4 == 0 ? rng() : rng() % 8);
        return recordItem(tf::RecordTag::Stack, [&](tf::ByteWriter& w) {
            tf::encodeStack(w, id, frames.data(), static_cast<uint32_t>(frames.size()));
        });
    }
    case 5:
        return recordItem(tf::RecordTag::Phase, [&](tf::ByteWriter& w) {
            tf::encodePhase(w, tf::PhaseInfo{rng(), randomText(rng, 16)});
        });
    case 6:
        return recordItem(tf::RecordTag::Trailer, [&](tf::ByteWriter& w) {
            tf::TrailerInfo t;
            t.events = rng() % 100;
            t.dropped_events = rng() % 3 == 0 ? rng() % 50 : 0;
            t.end_mono_ns = rng();
            t.exit_signal = rng() % 4 == 0 ? static_cast<int32_t>(rng() % 32) : 0;
            t.in_flight = rng() % 4 == 0 ? (rng() % 2 ? interesting(rng) : rng() % 8) : 0;
            tf::encodeTrailer(w, t);
        });
    default: {
        LogItem item;
        item.type = LogItem::Type::Record;
        item.tag = static_cast<uint8_t>(8 + rng() % 248);
        item.body.resize(rng() % 32);
        for (uint8_t& b : item.body) {
            b = static_cast<uint8_t>(rng());
        }
        return item;
    }
    }
}

void mutate(TraceSpec& spec, std::mt19937_64& rng, Focus focus,
            size_t (*mutate_bytes)(uint8_t*, size_t, size_t)) {
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i) {
        if (focus == Focus::Ring) {
            mutateRing(spec, rng, mutate_bytes);
        } else {
            mutateRecords(spec, rng, mutate_bytes);
        }
    }
}

TraceSpec crossOver(const TraceSpec& a, const TraceSpec& b, std::mt19937_64& rng) {
    TraceSpec out;
    out.ring_slots_log2 = rng() % 2 ? a.ring_slots_log2 : b.ring_slots_log2;
    out.dropped_events = rng() % 2 ? a.dropped_events : b.dropped_events;
    const size_t i = a.log.empty() ? 0 : rng() % (a.log.size() + 1);
    const size_t j = b.log.empty() ? 0 : rng() % (b.log.size() + 1);
    out.log.assign(a.log.begin(), a.log.begin() + static_cast<long>(i));
    out.log.insert(out.log.end(), b.log.begin() + static_cast<long>(j), b.log.end());
    const size_t k = a.ring.empty() ? 0 : rng() % (a.ring.size() + 1);
    const size_t l = b.ring.empty() ? 0 : rng() % (b.ring.size() + 1);
    out.ring.assign(a.ring.begin(), a.ring.begin() + static_cast<long>(k));
    out.ring.insert(out.ring.end(), b.ring.begin() + static_cast<long>(l), b.ring.end());
    return out;
}

TraceSpec seedSpec() {
    TraceSpec spec;
    tf::HeaderInfo h;
    h.pid = 4242;
    h.start_mono_ns = 1000;
    h.stack_depth = 64;
    h.granularity = 2u << 20;
    h.command = "./app";
    h.executable = "/usr/bin/app";
    spec.log.push_back(
        recordItem(tf::RecordTag::Header, [&](tf::ByteWriter& w) { tf::encodeHeader(w, h); }));
    for (int d = 0; d < 2; ++d) {
        tf::DeviceInfo dev;
        dev.ordinal = d;
        dev.total_bytes = 80ull << 30;
        dev.granularity = 2u << 20;
        dev.name = "GPU";
        spec.log.push_back(recordItem(tf::RecordTag::Device,
                                      [&](tf::ByteWriter& w) { tf::encodeDevice(w, dev); }));
    }
    spec.log.push_back(recordItem(tf::RecordTag::Module, [&](tf::ByteWriter& w) {
        tf::encodeModule(w, tf::ModuleInfo{0x400000, 0x400000, 0x500000, "/usr/bin/app", ""});
    }));
    for (uint32_t id = 1; id <= 3; ++id) {
        const uint64_t frames[] = {0x401000 + id * 0x100, 0x402000};
        spec.log.push_back(recordItem(
            tf::RecordTag::Stack, [&](tf::ByteWriter& w) { tf::encodeStack(w, id, frames, 2); }));
    }
    LogItem end;
    end.type = LogItem::Type::FrameEnd;
    spec.log.push_back(end);
    auto ev = [&](uint64_t t, tf::Op op, tf::Kind kind, uint64_t address, uint64_t size,
                  uint64_t context, int16_t device) {
        tf::Event e;
        e.time_ns = t;
        e.op = op;
        e.kind = kind;
        e.api = apiFor(op, kind);
        e.address = address;
        e.size = size;
        e.context = context;
        e.device = device;
        e.stack_id = 1 + static_cast<uint32_t>(t % 3);
        e.tid = 100;
        spec.log.push_back(eventItem(e));
        return e;
    };
    const uint64_t B = kDeviceBase;
    ev(2000, tf::Op::Alloc, tf::Kind::Device, B, 3u << 20, 0xc0, 0);
    ev(2001, tf::Op::Alloc, tf::Kind::Device, B + (4u << 20), 4096, 0xc0, 0);
    ev(2002, tf::Op::Alloc, tf::Kind::HostPinned, 0x10000, 100, 0xc0, -1);
    ev(2003, tf::Op::Alloc, tf::Kind::Pool, B + (8u << 20), 1000, 0xc1, 1);
    tf::Event create = ev(2004, tf::Op::VmmCreate, tf::Kind::Vmm, 0, 2u << 20, 0xc0, 0);
    (void)create;
    ev(2005, tf::Op::Free, tf::Kind::Device, B, 0, 0xc0, 0);
    spec.log.push_back(end);
    ev(2006, tf::Op::CtxCreate, tf::Kind::None, 0, 0, 0xcc, 0);
    ev(2007, tf::Op::Alloc, tf::Kind::Device, B + (16u << 20), 8192, 0xcc, 0);
    ev(2008, tf::Op::Teardown, tf::Kind::None, 0, 0, 0, 0);
    ev(2009, tf::Op::Free, tf::Kind::Device, B + (4u << 20), 0, 0xc0, 0);
    spec.log.push_back(recordItem(tf::RecordTag::Trailer, [&](tf::ByteWriter& w) {
        tf::TrailerInfo t;
        t.events = 10;
        t.end_mono_ns = 3000;
        tf::encodeTrailer(w, t);
    }));
    return spec;
}

} // namespace gmt::fuzz
