#include "analysis/lifetimes.h"

#include "base/saturating.h"

#include <algorithm>

namespace gmt::analyzer {

using format::Api;
using format::Event;
using format::Kind;
using format::Op;

std::string_view lifetimeEndName(LifetimeEnd how) {
    switch (how) {
    case LifetimeEnd::Freed:
        return "freed";
    case LifetimeEnd::Teardown:
        return "teardown";
    case LifetimeEnd::Replaced:
        return "replaced";
    case LifetimeEnd::ProcessEnd:
        return "process_end";
    }
    return "freed";
}

// Declared in lifetimes.h, which passes it between Lifetimes' free paths.
enum class Family : uint8_t {
    Unknown,
    DevicePointer,
    HostAlloc,
    HostRegister,
    Array,
    MipmappedArray
};

namespace {

// Inline into both of onFree's paths (GCC called it once there were two).
[[gnu::always_inline]] inline Family allocFamily(Api api, Kind kind) {
    switch (api) {
    case Api::cudaMallocHost:
    case Api::cudaHostAlloc:
    case Api::cuMemAllocHost_v2:
    case Api::cuMemHostAlloc:
        return Family::HostAlloc;
    case Api::cudaHostRegister:
    case Api::cuMemHostRegister_v2:
        return Family::HostRegister;
    case Api::cudaMallocArray:
    case Api::cudaMalloc3DArray:
    case Api::cuArrayCreate_v2:
    case Api::cuArray3DCreate_v2:
        return Family::Array;
    case Api::cudaMallocMipmappedArray:
    case Api::cuMipmappedArrayCreate:
        return Family::MipmappedArray;
    default:
        break;
    }
    switch (kind) {
    case Kind::HostPinned:
        return Family::HostAlloc;
    case Kind::Array:
        return Family::Array;
    case Kind::None:
        return Family::Unknown;
    default:
        return Family::DevicePointer;
    }
}

Family freeFamily(Api api) {
    switch (api) {
    case Api::cudaFree:
    case Api::cuMemFree_v2:
    case Api::cudaFreeAsync:
    case Api::cudaFreeAsync_ptsz:
    case Api::cuMemFreeAsync:
    case Api::cuMemFreeAsync_ptsz:
        return Family::DevicePointer;
    case Api::cudaFreeHost:
    case Api::cuMemFreeHost:
        return Family::HostAlloc;
    case Api::cudaHostUnregister:
    case Api::cuMemHostUnregister:
        return Family::HostRegister;
    case Api::cudaFreeArray:
    case Api::cuArrayDestroy:
        return Family::Array;
    case Api::cudaFreeMipmappedArray:
    case Api::cuMipmappedArrayDestroy:
        return Family::MipmappedArray;
    default:
        return Family::Unknown;
    }
}

bool isArrayFamily(Family f) {
    return f == Family::Array || f == Family::MipmappedArray;
}

// Whether a free is an array's: by its call, or by the kind it names when the call is none
// the recorder knows.
bool isArrayCall(Family family, const Event& e) {
    return isArrayFamily(family) || (family == Family::Unknown && e.kind == Kind::Array);
}

} // namespace

Lifetimes::Lifetimes(uint32_t process, LiveAccounting& accounting, size_t max_errors)
    : process_(process), accounting_(accounting), max_errors_(max_errors) {}

Charge Lifetimes::charge(const PhysicalHandle& h) const {
    return Charge{process_, h.stack, h.device, Kind::Vmm, !h.host_located, h.size, h.site};
}

uint64_t& Lifetimes::liveOnSlow(int device) {
    live_device_ = device;
    live_device_bytes_ = &live_by_device_[device];
    return *live_device_bytes_;
}

Lifetimes::PointerMap::iterator Lifetimes::pointersUpperBound(uint64_t address) {
    if (hint_version_ == pointers_version_) {
        // Nothing changed since the last erasure, whose successor is hint_: it is the
        // upper bound of any address between its predecessor's key and its own.
        auto h = hint_;
        if ((h == pointers_.end() || h->first > address) &&
            (h == pointers_.begin() || std::prev(h)->first <= address)) {
            return h;
        }
    }
    return pointers_.upper_bound(address);
}

Lifetimes::PointerMap::iterator Lifetimes::insertPointer(PointerMap::iterator hint,
                                                         uint64_t address) {
    PointerMap::iterator it;
    if (!spare_nodes_.empty()) {
        PointerMap::node_type node = std::move(spare_nodes_.back());
        spare_nodes_.pop_back();
        node.key() = address;
        it = pointers_.insert(hint, std::move(node));
    } else {
        it = pointers_.emplace_hint(hint, address, Allocation{});
    }
    pointer_index_[address] = it;
    ++pointers_version_;
    return it;
}

Lifetimes::PointerMap::iterator Lifetimes::erasePointer(PointerMap::iterator it) {
    constexpr size_t kMaxSpareNodes = 1024;
    auto next = std::next(it);
    teardown_.unlink(it->second);
    pointer_index_.erase(it->first);
    if (spare_nodes_.size() < kMaxSpareNodes) {
        spare_nodes_.push_back(pointers_.extract(it));
    } else {
        pointers_.erase(it);
    }
    hint_ = next;
    hint_version_ = ++pointers_version_;
    return next;
}

uint64_t Lifetimes::liveDeviceBytes(int device) const {
    auto it = live_by_device_.find(device);
    return it == live_by_device_.end() ? 0 : it->second;
}

void Lifetimes::error(ErrorType type, const Event& e, uint32_t alloc_stack, Api alloc_api,
                      std::string detail, uint32_t since_gaps) {
    if (since_gaps < pause_gaps_) {
        // Recording was paused since what the error contradicts: the allocation or free
        // that explains it was made unrecorded, as the trace says. No error.
        ++counters_.paused_frees;
        return;
    }
    const bool uncertain = since_gaps < gaps_ || unlocated_loss_;
    ++counters_.errors;
    counters_.uncertain_errors += uncertain ? 1 : 0;
    FreeError error{type,        e.api,     e.address, e.time_ns,         e.stack_id,
                    alloc_stack, alloc_api, e.result,  std::move(detail), uncertain};
    if (observer_) {
        observer_->freeError(process_, error);
    }
    if (errors_.size() < max_errors_) {
        errors_.push_back(std::move(error));
    }
}

void Lifetimes::onGap() {
    ++gaps_;
}

void Lifetimes::onPause() {
    onGap();
    pause_gaps_ = gaps_;
}

void Lifetimes::onUnlocatedLoss() {
    if (unlocated_loss_) {
        return;
    }
    unlocated_loss_ = true;
    for (FreeError& e : errors_) {
        e.uncertain = true;
    }
    counters_.uncertain_errors = counters_.errors;
    for (auto& [key, g] : leaks_) {
        g.uncertain_bytes = g.bytes;
        g.uncertain_allocations = g.allocations;
    }
}

void Lifetimes::leak(const LeakKey& key, uint64_t bytes, int device, bool uncertain) {
    LeakGroup& g = leaks_[key];
    addSaturating(g.bytes, bytes);
    g.allocations += 1;
    if (uncertain || unlocated_loss_) {
        addSaturating(g.uncertain_bytes, bytes);
        g.uncertain_allocations += 1;
    }
    addSaturating(g.bytes_by_device[device], bytes);
}

namespace {

// What may end memory or address space. The peak's live set lasts until the first of these;
// its snapshot (sites, fragmentation) is taken right before, so it includes mappings made
// on the plateau. (A free, the most common of them, is gated by Lifetimes::onEvent.)
bool mayEnd(Op op) {
    switch (op) {
    case Op::VmmRelease:
    case Op::VmmUnmap:
    case Op::VmmAddressFree:
    case Op::Teardown:
        return true;
    default:
        return false;
    }
}

} // namespace

bool Lifetimes::onOtherEvent(const Event& e) {
    if (mayEnd(e.op)) {
        gate();
    }
    event_ = &e;
    switch (e.op) {
    case Op::Alloc: // a failed one: onEvent() applies the others
        ++counters_.failed_allocations;
        return true;
    case Op::Free: // onEvent() applies every free
        return false;
    case Op::VmmReserve:
        if (e.result == 0) {
            reservations_[e.address] = Reservation{e.size, e.stack_id};
        }
        return false;
    case Op::VmmAddressFree: {
        if (e.result != 0) {
            return false;
        }
        auto it = reservations_.find(e.address);
        if (it == reservations_.end()) {
            error(ErrorType::InvalidFree, e, 0, Api::Unknown,
                  "cuMemAddressFree of an address range that was not reserved", 0);
        } else {
            reservations_.erase(it);
        }
        return false;
    }
    case Op::VmmCreate:
        if (e.result != 0) {
            if (e.flags & format::kFlagImported) {
                return false; // a refused import allocates nothing
            }
            ++counters_.failed_allocations;
            return true;
        }
        if (e.flags & format::kFlagImported) {
            onVmmImport(e);
        } else {
            onVmmCreate(e);
        }
        return false;
    case Op::VmmRetain:
        return ifSucceeded(e, &Lifetimes::onVmmRetain);
    case Op::VmmRelease:
        return ifSucceeded(e, &Lifetimes::onVmmRelease);
    case Op::VmmMap:
        return ifSucceeded(e, &Lifetimes::onVmmMap);
    case Op::VmmUnmap:
        return ifSucceeded(e, &Lifetimes::onVmmUnmap);
    case Op::Teardown:
        if (e.result == 0) {
            onTeardown(e);
        }
        return false;
    case Op::CtxCreate:
        if (e.result == 0 && e.context != 0) {
            teardown_.onContextCreated(e.context);
        }
        return false;
    case Op::PoolCreate:
    case Op::PoolDestroy:
    case Op::PoolTrim:
        // Pool memory is counted per allocation, from request to free request; what the
        // pool itself keeps reserved is the driver's business.
        return false;
    case Op::Block:
        // A caching allocator's block: inside a segment this process already holds
        // (Analysis hands these to its BlockTracker).
        return false;
    }
    return false;
}

// Makes room in pointers_ for an allocation of `extent` bytes at `address`, first ending
// (as implicit ends) the live allocations it overlaps. Returns the stored allocation for
// the caller to fill and link (its values are stale, it is in no teardown list).
// Inline into its one caller, the reuse of the node freed last at the same address (every
// allocation loop's) in a few comparisons: the live set is the tree without that node,
// whose predecessor ends before this address (live pointers are disjoint), so only the next
// node could overlap, and the freed allocation's own range was clear of it (when its end
// did not wrap around): an allocation no longer than the freed one takes the node as it
// is. The rest out of line.
[[gnu::always_inline]] inline Allocation& Lifetimes::placePointer(uint64_t address, uint64_t extent,
                                                                  uint64_t time_ns) {
    if (freedLastAt(address)) {
        const uint64_t freed_extent = pending_free_it_->second.extent;
        if (extent <= freed_extent && address + std::max<uint64_t>(freed_extent, 1) > address) {
            pending_free_ = false;
            return pending_free_it_->second;
        }
    }
    return placePointerElsewhere(address, extent, time_ns);
}

Allocation& Lifetimes::placePointerElsewhere(uint64_t address, uint64_t extent, uint64_t time_ns) {
    const uint64_t end = address + std::max<uint64_t>(extent, 1);
    // The node freed last, at this address, for an allocation longer than the freed one:
    // still exactly the insertion below with nothing to end when the next node starts
    // after its end.
    if (freedLastAt(address)) {
        auto next = std::next(pending_free_it_);
        if (next == pointers_.end() || next->first >= end) {
            pending_free_ = false;
            return pending_free_it_->second;
        }
    }
    settlePendingFreeNow();
    // A live allocation overlapping the new one must have been freed unseen: end it
    // rather than count it twice, as an event missing from the trace (implicitEnd()).
    auto it = pointersUpperBound(address);
    if (it != pointers_.begin()) {
        auto prev = std::prev(it);
        if (prev->first + std::max<uint64_t>(prev->second.extent, 1) > address) {
            it = prev;
        }
    }
    while (it != pointers_.end() && it->first < end) {
        endReplaced(it->second, time_ns);
        it = erasePointer(it);
    }
    // `it` is now the upper bound of the address: every key before it is below.
    return insertPointer(it, address)->second;
}

void Lifetimes::addFolded(const format::SiteTotals& folded) {
    const auto kind = static_cast<Kind>(folded.kind);
    counters_.allocations += folded.allocations;
    counters_.frees += folded.allocations;
    const size_t k = kindIndex(kind);
    counters_.allocations_by_kind[k] += folded.allocations;
    counters_.largest_by_kind[k] = std::max(counters_.largest_by_kind[k], folded.largest);
    accounting_.addFolded(
        Charge{process_, folded.stack, folded.device, kind, kind != Kind::HostPinned, folded.bytes},
        folded.allocations);
}

// Out of line: an array's place, apart from the pointers' of almost every allocation, leaves
// addAllocation fewer values to keep across it (GCC kept some on the stack).
Allocation& Lifetimes::placeArray(const Event& e) {
    auto old = arrays_.find(e.address);
    if (old != arrays_.end()) {
        teardown_.unlink(old->second);
        endReplaced(old->second, e.time_ns);
    }
    return arrays_[e.address];
}

void Lifetimes::endReplaced(const Allocation& a, uint64_t time_ns) {
    implicitEnd(a.gaps);
    accounting_.remove(charge(a), time_ns);
    notifyEnded(time_ns, LifetimeEnd::Replaced, a);
    if (a.kind != Kind::HostPinned) {
        subtractSaturating(liveOn(a.device), a.size);
    }
}

void Lifetimes::addAllocation(const Event& e) {
    if (e.address == 0) {
        return; // a zero-byte request answered with NULL: nothing is held
    }
    const Kind kind = e.kind == Kind::None ? Kind::Device : e.kind;
    const uint64_t extent = std::max(e.size, e.actual_size);
    ++counters_.allocations;
    const size_t k = kindIndex(kind);
    ++counters_.allocations_by_kind[k];
    counters_.largest_by_kind[k] = std::max(counters_.largest_by_kind[k], e.size);
    teardown_.learnContext(e.context, e.device);
    // The stored allocation is written field by field from the event, once its place is
    // known (after the ends it may imply, so `gaps` is the count after them), rather than
    // built on the stack and copied: a copy's wide loads of fields just written by narrow
    // stores stall on store forwarding, and every allocation came through here.
    auto fill = [&](Allocation& a) {
        a.address = e.address;
        a.size = e.size;
        a.extent = extent;
        a.context = e.context;
        a.time_ns = e.time_ns;
        a.stack = e.stack_id;
        a.device = e.device;
        a.kind = kind;
        a.api = e.api;
        a.site = kNoSite;
        a.phase = phase_;
        a.gaps = gaps_;
    };
    // The node freed last, reused, is still in the teardown list of what it held (onFree):
    // link() keeps it there or moves it.
    Allocation* stored =
        kind != Kind::Array ? &placePointer(e.address, extent, e.time_ns) : &placeArray(e);
    fill(*stored);
    teardown_.link(*stored);
    freed_.forget(e.address);
    // Charged from the event's values, not read back from the fields just stored.
    const uint32_t site = accounting_.add(
        Charge{process_, e.stack_id, e.device, kind, kind != Kind::HostPinned, e.size, kNoSite},
        e.time_ns);
    stored->site = site;
    if (kind != Kind::HostPinned) {
        addSaturating(liveOn(e.device), e.size);
    }
    if (observer_) {
        observer_->began(lifetime(*stored), e);
    }
}

// Inline into its two callers: every free ends here, and the call's entry and exit (the
// registers saved and restored) cost as much as some of its parts.
[[gnu::always_inline]] inline void Lifetimes::endAllocation(const Allocation& a, uint64_t time_ns,
                                                            bool by_teardown) {
    accounting_.remove(charge(a), time_ns);
    notifyEnded(time_ns, by_teardown ? LifetimeEnd::Teardown : LifetimeEnd::Freed, a);
    if (a.kind != Kind::HostPinned) {
        subtractSaturating(liveOn(a.device), a.size);
    }
    if (by_teardown) {
        leak(LeakKey{a.stack, a.kind, a.api, true, a.phase}, a.size, a.device, a.gaps < gaps_);
    }
    freed_.remember(a.address, a.stack, a.api, by_teardown, gaps_);
}

void Lifetimes::endHandle(std::unordered_map<uint64_t, PhysicalHandle>::iterator it,
                          uint64_t time_ns, LifetimeEnd how) {
    if (it->second.counted()) {
        accounting_.remove(charge(it->second), time_ns);
        notifyEnded(time_ns, how, it->first, it->second);
        if (!it->second.host_located) {
            subtractSaturating(liveOn(it->second.device), it->second.size);
        }
    }
    handles_.erase(it);
}

namespace {
// A handle as the event that introduced it describes it. Only a created one knows its size.
PhysicalHandle handleFrom(const Event& e, HandleOrigin origin, uint32_t references) {
    PhysicalHandle h;
    h.origin = origin;
    h.size = origin == HandleOrigin::Created ? e.size : 0;
    h.time_ns = e.time_ns;
    h.stack = e.stack_id;
    h.device = e.device;
    h.host_located = (e.flags & format::kFlagHostLocated) != 0;
    h.references = references;
    h.api = e.api;
    return h;
}
} // namespace

void Lifetimes::onVmmCreate(const Event& e) {
    auto old = handles_.find(e.handle);
    if (old != handles_.end()) { // a value reused while we still hold it: lost release
        implicitEnd(old->second.gaps);
        endHandle(old, e.time_ns, LifetimeEnd::Replaced);
    }
    PhysicalHandle h = handleFrom(e, HandleOrigin::Created, 1);
    h.phase = phase_;
    h.gaps = gaps_;
    PhysicalHandle& held = handles_[e.handle];
    held = h;
    held.site = accounting_.add(charge(h), e.time_ns);
    if (!h.host_located) {
        addSaturating(liveOn(h.device), h.size);
    }
    if (observer_) {
        observer_->began(lifetime(e.handle, held), e);
    }
    ++counters_.allocations;
    const size_t kind = static_cast<size_t>(Kind::Vmm);
    ++counters_.allocations_by_kind[kind];
    counters_.largest_by_kind[kind] = std::max(counters_.largest_by_kind[kind], h.size);
}

void Lifetimes::onVmmImport(const Event& e) {
    ++counters_.imported_handles;
    auto held = handles_.find(e.handle);
    if (held != handles_.end()) {
        // The same value while it is held is the same allocation (an import into the
        // process that exported it may hand back its own handle): one more reference.
        ++held->second.references;
        return;
    }
    PhysicalHandle& h = handles_[e.handle];
    h = handleFrom(e, HandleOrigin::Imported, 1);
    h.gaps = gaps_;
}

PhysicalHandle& Lifetimes::unseenHandle(const Event& e) {
    auto [it, inserted] = handles_.try_emplace(e.handle);
    PhysicalHandle& h = it->second;
    if (inserted) {
        h = handleFrom(e, HandleOrigin::Unseen, 0);
        h.gaps = gaps_;
        h.device = -1; // a map or retain event says nothing of where the memory is
        // Its mappings made before now (rare: only a handle from an unseen route has an
        // entry created this late) still hold it.
        for (const auto& [address, m] : mappings_) {
            if (m.handle == e.handle) {
                ++h.mappings;
                h.size = std::max(h.size, m.size);
            }
        }
    }
    return h;
}

void Lifetimes::onVmmRetain(const Event& e) {
    ++unseenHandle(e).references;
}

void Lifetimes::onVmmRelease(const Event& e) {
    auto it = handles_.find(e.handle);
    Event copy = e;
    copy.address = e.handle;
    if (it == handles_.end()) {
        error(ErrorType::InvalidFree, copy, 0, Api::Unknown,
              "cuMemRelease of a handle that is not held", 0);
        return;
    }
    PhysicalHandle& h = it->second;
    if (h.references == 0) {
        // A handle whose first reference the trace did not see cannot be judged.
        if (h.origin != HandleOrigin::Unseen) {
            error(ErrorType::DoubleFree, copy, h.stack, h.api,
                  "cuMemRelease of a handle with no reference left (released more often than "
                  "created, imported and retained)",
                  h.gaps);
        }
        return;
    }
    if (--h.references == 0 && h.counted()) {
        ++counters_.frees; // the program's last reference: the free of the allocation
    }
    if (!h.alive()) {
        endHandle(it, e.time_ns);
    }
}

void Lifetimes::onVmmMap(const Event& e) {
    if (mappings_.contains(e.address)) {
        // Mapped again where a mapping still is: its unmap was not recorded.
        Event unmap = e;
        unmap.size = 1;
        implicitEnd(0); // a mapping keeps no gap count: any pause may explain it
        onVmmUnmap(unmap);
    }
    auto it = handles_.find(e.handle);
    PhysicalHandle& h = it != handles_.end() ? it->second : unseenHandle(e);
    ++h.mappings;
    if (!h.counted()) {
        // The importer is never told the size; what it maps is the part it uses.
        h.size = std::max(h.size, saturatingAdd(e.offset, e.size));
    }
    mappings_[e.address] = Mapping{e.size, e.handle};
}

void Lifetimes::onVmmUnmap(const Event& e) {
    auto first = mappings_.lower_bound(e.address);
    auto last = mappings_.lower_bound(e.address + std::max<uint64_t>(e.size, 1));
    if (first == last) {
        error(ErrorType::InvalidFree, e, 0, Api::Unknown, "cuMemUnmap of a range with no mapping",
              0);
        return;
    }
    std::vector<uint64_t> to_end;
    for (auto it = first; it != last; ++it) {
        auto h = handles_.find(it->second.handle);
        if (h != handles_.end() && h->second.mappings > 0 && --h->second.mappings == 0 &&
            h->second.references == 0) {
            to_end.push_back(it->second.handle);
        }
    }
    mappings_.erase(first, last);
    for (uint64_t handle : to_end) {
        if (auto it = handles_.find(handle); it != handles_.end()) {
            endHandle(it, e.time_ns);
        }
    }
}

// Almost every free is of a live pointer allocation by a call that is not an array's: that
// case ends it here, apart from the others, so that the allocation found stays in a register
// on its way into the accounting (merged with the other cases, GCC kept it on the stack: a
// store and a load on the path every free waits for).
void Lifetimes::onFree(const Event& e) {
    if (e.address == 0) {
        return; // freeing NULL is a no-op
    }
    const Family family = freeFamily(e.api);
    if (!isArrayCall(family, e)) [[likely]] {
        if (PointerMap::iterator* p = findPointer(e.address)) [[likely]] {
            endFound(e, family, (*p)->second, p);
            return;
        }
    }
    onFreeElsewhere(e, family);
}

void Lifetimes::onFreeElsewhere(const Event& e, Family family) {
    Allocation* found = nullptr;
    PointerMap::iterator* found_pointer = nullptr;
    if (isArrayCall(family, e)) {
        if (auto it = arrays_.find(e.address); it != arrays_.end()) {
            found = &it->second;
        } else if (auto* p = findPointer(e.address)) {
            found = &(*p)->second;
            found_pointer = p;
        }
    } else {
        if (auto* p = findPointer(e.address)) {
            found = &(*p)->second;
            found_pointer = p;
        } else if (auto it = arrays_.find(e.address); it != arrays_.end()) {
            found = &it->second;
        }
    }
    if (found) {
        endFound(e, family, *found, found_pointer);
        return;
    }
    const FreedAddresses::Freed* f = freed_.find(e.address);
    if (!f) {
        error(ErrorType::InvalidFree, e, 0, Api::Unknown,
              "free of an address that was never allocated", 0);
    } else if (f->by_teardown) {
        error(ErrorType::InvalidFree, e, f->allocation_stack, f->api,
              "free of an allocation that a device reset or context destroy already "
              "released",
              f->gaps);
    } else {
        error(ErrorType::DoubleFree, e, f->allocation_stack, f->api,
              "free of an address that was already freed", f->gaps);
    }
}

// Inline into onFree's common case and onFreeElsewhere: `pointer` null for an array.
[[gnu::always_inline]] inline void Lifetimes::endFound(const Event& e, Family family,
                                                       Allocation& found,
                                                       PointerMap::iterator* pointer) {
    const Family alloc_family = allocFamily(found.api, found.kind);
    if (family != Family::Unknown && alloc_family != Family::Unknown && family != alloc_family) {
        error(ErrorType::MismatchedFree, e, found.stack, found.api,
              std::string(format::apiName(e.api)) + " on memory from " +
                  std::string(format::apiName(found.api)),
              found.gaps);
    }
    if (e.result != 0) {
        return; // the driver refused: the allocation is still there
    }
    ++counters_.frees;
    // The allocation is ended where it is stored, not from a copy (every free came through
    // a copy of the whole allocation before): a pointer's node stays, logically erased,
    // until a reuse or the next free (see settlePendingFree); an array's entry goes after.
    // The node stays in its teardown list too: settling it unlinks it (erasePointer), and
    // a reuse for the same list keeps it there (addAllocation). Every teardown settles it
    // first, so no teardown meets a freed allocation.
    if (!pointer) {
        teardown_.unlink(found);
    } else {
        PointerMap::iterator node = *pointer; // before settling moves the index
        settlePendingFreeNow();
        pending_free_ = true;
        pending_free_it_ = node;
    }
    endAllocation(found, e.time_ns, false);
    if (!pointer) {
        arrays_.erase(e.address); // found's key
    }
}

void Lifetimes::onTeardown(const Event& e) {
    ++counters_.teardowns;
    settlePendingFreeNow();
    // Ended in address order, pointers before arrays, whatever order the index keeps.
    std::vector<Allocation> ended;
    for (Allocation* a : teardown_.take(e)) {
        ended.push_back(*a);
    }
    std::sort(ended.begin(), ended.end(), [](const Allocation& x, const Allocation& y) {
        const bool xa = x.kind == Kind::Array, ya = y.kind == Kind::Array;
        return xa != ya ? ya : x.address < y.address;
    });
    for (const Allocation& a : ended) {
        if (a.kind == Kind::Array) {
            arrays_.erase(a.address);
        } else if (PointerMap::iterator* it = pointer_index_.find(a.address)) {
            erasePointer(*it);
        }
    }
    accounting_.beginRemovals();
    for (const Allocation& a : ended) {
        endAllocation(a, e.time_ns, true);
    }
    accounting_.endRemovals(e.time_ns);
}

void Lifetimes::releaseAll(uint64_t time_ns) {
    event_ = nullptr;
    settlePendingFreeNow();
    accounting_.beginRemovals();
    for (const auto& [address, a] : pointers_) {
        accounting_.remove(charge(a), time_ns);
        notifyEnded(time_ns, LifetimeEnd::ProcessEnd, a);
    }
    for (const auto& [address, a] : arrays_) {
        accounting_.remove(charge(a), time_ns);
        notifyEnded(time_ns, LifetimeEnd::ProcessEnd, a);
    }
    for (const auto& [handle, h] : handles_) {
        if (h.counted()) { // imported handles were never charged
            accounting_.remove(charge(h), time_ns);
            notifyEnded(time_ns, LifetimeEnd::ProcessEnd, handle, h);
        }
    }
    accounting_.endRemovals(time_ns);
}

void Lifetimes::finish() {
    settlePendingFreeNow();
    for (const auto& [address, a] : pointers_) {
        leak(LeakKey{a.stack, a.kind, a.api, false, a.phase}, a.size, a.device, a.gaps < gaps_);
    }
    for (const auto& [address, a] : arrays_) {
        leak(LeakKey{a.stack, a.kind, a.api, false, a.phase}, a.size, a.device, a.gaps < gaps_);
    }
    for (const auto& [handle, h] : handles_) {
        if (h.counted()) {
            leak(LeakKey{h.stack, Kind::Vmm, h.api, false, h.phase}, h.size,
                 h.host_located ? -1 : h.device, h.gaps < gaps_);
        }
    }
}

} // namespace gmt::analyzer
