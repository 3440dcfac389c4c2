// Allocation lifetimes of one traced process with CUDA's semantics: pointers (device,
// pitch, managed, pool, pinned host) live until freed; arrays until destroyed; virtual
// memory in three layers kept apart — reservations (address space, no bytes), physical
// handles (bytes until every reference is released *and* every mapping unmapped; imported
// handles are another process's bytes) and mappings; teardown ends what a context owned
// except VMM handles and pool memory. Detects double, invalid and mismatched frees. Live
// bytes are charged to the shared LiveAccounting.
#pragma once

#include "analysis/allocation.h"
#include "analysis/freed_addresses.h"
#include "analysis/live_accounting.h"
#include "analysis/phase_tracker.h"
#include "analysis/teardown_index.h"
#include "base/flat_map.h"
#include "model/error_type.h"

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/event.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gmt::analyzer {

struct Reservation {
    uint64_t size = 0;
    uint32_t stack = 0;
};

// Whose physical memory a handle stands for.
enum class HandleOrigin : uint8_t {
    Created,  // cuMemCreate here: its bytes count in this process, and leak here
    Imported, // cuMemImportFromShareableHandle: the exporting process's memory
    Unseen,   // first seen mapped or retained: made where the trace could not see
};

// A physical allocation handle and its references, as the driver counts them: create,
// import and retain each add one, release drops one; the memory lives until the last
// reference is released *and* the last mapping of it unmapped.
struct PhysicalHandle {
    uint64_t size = 0; // created: bytes; otherwise the largest offset + size mapped
    uint32_t gaps = 0; // gaps in the trace before it was first seen
    uint64_t time_ns = 0;
    uint32_t stack = 0;
    int device = -1;
    bool host_located = false;
    HandleOrigin origin = HandleOrigin::Created;
    uint32_t references = 0;
    uint32_t mappings = 0;
    format::Api api = format::Api::Unknown;
    uint32_t site = kNoSite;
    uint32_t phase = kNoPhase; // the phase current when it was created (phase_tracker.h)

    // Only this process's own memory is counted (peak, live bytes, leaks).
    bool counted() const { return origin == HandleOrigin::Created; }
    bool alive() const { return references > 0 || mappings > 0; }
};

struct Mapping {
    uint64_t size = 0;
    uint64_t handle = 0;
};

struct FreeError {
    ErrorType type = ErrorType::InvalidFree;
    format::Api api = format::Api::Unknown;
    uint64_t address = 0;
    uint64_t time_ns = 0;
    uint32_t stack = 0;
    uint32_t allocation_stack = 0; // 0: unknown
    format::Api allocation_api = format::Api::Unknown;
    int32_t result = 0;
    std::string detail;
    // Events missing from the trace (a gap, or drops) could explain it: the allocation or
    // free it contradicts may be among them.
    bool uncertain = false;
};

// Leaks are aggregated as they become known (teardown) and at the end, apart per phase
// the allocations were made in (kNoPhase: before any marker).
struct LeakKey {
    uint32_t stack = 0;
    format::Kind kind = format::Kind::None;
    format::Api api = format::Api::Unknown;
    bool released_by_teardown = false;
    uint32_t phase = kNoPhase;
    auto operator<=>(const LeakKey&) const = default;
};
struct LeakGroup {
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    // Of those, allocated before events went missing: their free may be among them.
    uint64_t uncertain_bytes = 0;
    uint64_t uncertain_allocations = 0;
    std::map<int, uint64_t> bytes_by_device;
};

// Told of every allocation the analysis counts as it begins and ends, so that a view can
// stream lifetimes (export) without keeping them: pointer and array allocations, and the
// physical handles created here (imported and unseen handles are not this process's).
struct LifetimeInfo {
    uint64_t address = 0; // the pointer; an array's handle; a VMM physical handle's value
    uint64_t begin_ns = 0;
    format::Api api = format::Api::Unknown;
    Charge charge; // process, stack, device, kind, device-resident or not, bytes
};
enum class LifetimeEnd : uint8_t {
    Freed,      // freed, released, unmapped: the program let it go
    Teardown,   // a device reset or context destroy released it (still a leak)
    Replaced,   // an allocation was made over it: its free was not recorded
    ProcessEnd, // still held when its process ended (a leak)
};
// "freed", "teardown", "replaced", "process_end": how views name a lifetime's end.
std::string_view lifetimeEndName(LifetimeEnd how);

class LifetimeObserver {
  public:
    virtual ~LifetimeObserver() = default;
    // `e`: the event that made it.
    virtual void began(const LifetimeInfo& /*lifetime*/, const format::Event& /*e*/) {}
    // `cause`: the event that ended it; null at the process's end.
    virtual void ended(const LifetimeInfo& /*lifetime*/, uint64_t /*time_ns*/, LifetimeEnd /*how*/,
                       const format::Event* /*cause*/) {}
    // Every bad free as it is found (errors() keeps only the first max_errors).
    virtual void freeError(uint32_t /*process*/, const FreeError& /*error*/) {}
};

struct ProcessCounters {
    uint64_t allocations = 0;
    uint64_t frees = 0;
    uint64_t failed_allocations = 0;
    uint64_t errors = 0;
    uint64_t teardowns = 0;
    uint64_t implicit_ends = 0;    // a new allocation over a live one (a free not recorded)
    uint64_t imported_handles = 0; // cuMemImportFromShareableHandle: not allocations here
    uint64_t uncertain_errors = 0; // of `errors`, those missing events could explain
    // Frees, releases and unmaps of memory allocated while recording was paused or before it
    // started (and allocations made over memory freed while paused): no errors.
    uint64_t paused_frees = 0;
    std::array<uint64_t, kKindCount> allocations_by_kind{};
    std::array<uint64_t, kKindCount> largest_by_kind{}; // the largest single allocation
};

// Which allocation families a call belongs to (lifetimes.cpp): a free must match its
// allocation's.
enum class Family : uint8_t;

class Lifetimes {
  public:
    Lifetimes(uint32_t process, LiveAccounting& accounting, size_t max_errors = 1000);

    // Returns true when the event is a failed allocation (the caller diagnoses it). What may
    // end memory or address space passes gate() first: an event that may (a free, release,
    // unmap, address free, teardown) before anything of it is applied, and an end that an
    // event implies without naming it (implicitEnd(): a lost free's allocation replaced)
    // before it is made.
    // Successful allocations and frees, what an allocation loop is made of, are dispatched
    // inline; every other event out of line.
    bool onEvent(const format::Event& e) {
        if (e.op == format::Op::Alloc && e.result == 0) [[likely]] {
            event_ = &e;
            addAllocation(e);
            return false;
        }
        if (e.op == format::Op::Free) [[likely]] {
            gate(); // a free may end memory (the others that may: mayEnd(), lifetimes.cpp)
            event_ = &e;
            onFree(e);
            return false;
        }
        return onOtherEvent(e);
    }
    // Allocations an aggregated trace folded (allocated and freed, alive at no moment the
    // report describes): counted, at their site, as allocated and freed.
    void addFolded(const format::SiteTotals& folded);
    // Tells `observer` (may be null) of every counted lifetime from now on.
    void setObserver(LifetimeObserver* observer) { observer_ = observer; }
    // Allocations made from now on belong to this phase (PhaseTracker's index).
    void setPhase(uint32_t phase) { phase_ = phase; }
    // The process ended at `time_ns`: what it still holds stops counting as live memory
    // (a process's memory ends with it), but stays here for finish() and fragmentation.
    void releaseAll(uint64_t time_ns);
    // Everything still live becomes a leak; call once, at the end.
    void finish();

    // Events are missing from here on (the trace has a gap in its sequence, or its log
    // ends in damage): an error or leak that events in the gap could explain is marked
    // uncertain instead of being reported as fact.
    void onGap();
    // Events were lost at points the trace does not record (drop mode): every error and
    // leak is uncertain, those found so far included.
    void onUnlocatedLoss();
    // Recording was paused (a Recording record, GPUMEMTRACE_START=paused, `gpumemtrace
    // control`): what was made before may end unrecorded, and what ends later may have been
    // made unrecorded. A gap for leaks (uncertain); for errors an end of memory made before
    // it or while paused is no error but counted in ProcessCounters::paused_frees.
    void onPause();

    const std::map<uint64_t, Allocation>& pointers() const {
        settlePendingFree();
        return pointers_;
    }
    const std::unordered_map<uint64_t, Allocation>& arrays() const { return arrays_; }
    const std::map<uint64_t, Reservation>& reservations() const { return reservations_; }
    const std::map<uint64_t, Mapping>& mappings() const { return mappings_; }
    const std::unordered_map<uint64_t, PhysicalHandle>& handles() const { return handles_; }
    size_t liveCount() const {
        return pointers_.size() - (pending_free_ ? 1 : 0) + arrays_.size() + handles_.size();
    }
    // What a fragmentation measurement walks: pointers, handles, reservations and their
    // mappings (reservations hold no bytes, but a trace may hold millions of them).
    size_t walkSize() const { return liveCount() + reservations_.size() + mappings_.size(); }
    uint64_t liveDeviceBytes(int device) const;

    const std::map<LeakKey, LeakGroup>& leaks() const { return leaks_; }
    const std::vector<FreeError>& errors() const { return errors_; }
    const ProcessCounters& counters() const { return counters_; }

  private:
    // The live pointer allocations by address (pointers_, below).
    using PointerMap = std::map<uint64_t, Allocation>;

    Charge charge(const Allocation& a) const {
        return Charge{process_, a.stack, a.device, a.kind, a.kind != format::Kind::HostPinned,
                      a.size,   a.site};
    }
    Charge charge(const PhysicalHandle& h) const;
    bool onOtherEvent(const format::Event& e);
    void addAllocation(const format::Event& e);
    void onFree(const format::Event& e);
    // onFree's cases other than a live pointer allocation freed by a call not an array's.
    void onFreeElsewhere(const format::Event& e, Family family);
    // Ends the allocation a free found (`pointer`: its node's index entry; null for an array).
    void endFound(const format::Event& e, Family family, Allocation& found,
                  PointerMap::iterator* pointer);
    void endAllocation(const Allocation& a, uint64_t time_ns, bool by_teardown);
    // A refused call changes nothing; an accepted one goes to `handler`. Returns false (the
    // event is no allocation failure), as onEvent does.
    bool ifSucceeded(const format::Event& e, void (Lifetimes::*handler)(const format::Event&)) {
        if (e.result == 0) {
            (this->*handler)(e);
        }
        return false;
    }
    void onVmmCreate(const format::Event& e);
    void onVmmImport(const format::Event& e);
    void onVmmRetain(const format::Event& e);
    void onVmmRelease(const format::Event& e);
    void onVmmMap(const format::Event& e);
    void onVmmUnmap(const format::Event& e);
    // The handle's entry for a value first seen mapped or retained.
    PhysicalHandle& unseenHandle(const format::Event& e);
    void endHandle(std::unordered_map<uint64_t, PhysicalHandle>::iterator it, uint64_t time_ns,
                   LifetimeEnd how = LifetimeEnd::Freed);
    LifetimeInfo lifetime(const Allocation& a) const {
        return LifetimeInfo{a.address, a.time_ns, a.api, charge(a)};
    }
    LifetimeInfo lifetime(uint64_t handle, const PhysicalHandle& h) const {
        return LifetimeInfo{handle, h.time_ns, h.api, charge(h)};
    }
    // What ended is described only when an observer is told (`what...`: the arguments of
    // lifetime()): most runs have none, and every free comes here.
    template <typename... What>
    void notifyEnded(uint64_t time_ns, LifetimeEnd how, const What&... what) {
        if (observer_) {
            observer_->ended(lifetime(what...), time_ns, how, event_);
        }
    }
    void onTeardown(const format::Event& e);
    // The one gate before an end: the accounting's pending peak snapshot is taken now, while
    // pointers, handles, mappings and reservations (what the snapshot measures) still hold
    // the peak's live set. One branch when nothing is pending.
    void gate() { accounting_.settle(); }
    // An allocation, handle or mapping that an event ends without naming it (its own end
    // was not recorded): gated and counted before anything changes. Its end is an event
    // missing from the trace, as a gap's are: what was allocated before it may have lost
    // its free too, so it counts as a gap here (leaks and errors before it are uncertain)
    // and the process reports it (MissingEvents::unrecorded_frees).
    // `since_gaps`: the gap count when what it ends was made. When recording was paused
    // since, its end was made unrecorded while paused: counted as such, not as missing.
    void implicitEnd(uint32_t since_gaps) {
        gate();
        if (since_gaps < pause_gaps_) {
            ++counters_.paused_frees; // the pause is the gap already
            return;
        }
        ++counters_.implicit_ends;
        onGap();
    }
    // `since_gaps`: the gap count when the allocation or free the error contradicts was
    // made (0: none is known). A gap since makes the error uncertain; a pause since makes
    // it none (ProcessCounters::paused_frees).
    void error(ErrorType type, const format::Event& e, uint32_t alloc_stack, format::Api alloc_api,
               std::string detail, uint32_t since_gaps);
    void leak(const LeakKey& key, uint64_t bytes, int device, bool uncertain);
    // Inline: every allocation and free updates it, mostly on the device of the last.
    uint64_t& liveOn(int device) {
        return live_device_ == device ? *live_device_bytes_ : liveOnSlow(device);
    }
    uint64_t& liveOnSlow(int device);

    // pointers_ with an address index and recycled nodes: a free finds its allocation
    // without walking the tree, and an allocation placed where the last free left a gap
    // (the common free/alloc reuse) needs no search for its neighbours.
    PointerMap::iterator pointersUpperBound(uint64_t address);
    // A node for `address` before `hint` (its upper bound), indexed; its allocation is the
    // caller's to fill and link.
    PointerMap::iterator insertPointer(PointerMap::iterator hint, uint64_t address);
    PointerMap::iterator erasePointer(PointerMap::iterator it);
    Allocation& placePointer(uint64_t address, uint64_t extent, uint64_t time_ns);
    // An array's entry for an allocation event, ending one that was there.
    Allocation& placeArray(const format::Event& e);
    // An allocation that a new one at its place replaces (its free was not recorded) ends:
    // an implicit end, its bytes no longer live. Its node or entry is the caller's to remove.
    void endReplaced(const Allocation& a, uint64_t time_ns);
    // placePointer's cases other than reusing the node freed last as it was (lifetimes.cpp).
    Allocation& placePointerElsewhere(uint64_t address, uint64_t extent, uint64_t time_ns);
    // The live pointer allocation at `address`, or null. Inline: every free looks for one.
    PointerMap::iterator* findPointer(uint64_t address) {
        PointerMap::iterator* it = pointer_index_.find(address);
        if (it && pending_free_ && *it == pending_free_it_) {
            return nullptr; // freed: its node only waits to be reused or erased
        }
        return it;
    }
    // Whether the node freed last (still in the tree, waiting) is at `address`.
    bool freedLastAt(uint64_t address) const {
        return pending_free_ && pending_free_it_->first == address;
    }
    // A freed pointer allocation's node stays in the tree, marked, until the next change
    // to the tree: an allocation at the same address that fits before the next node
    // reuses it in place (no erase, no insert, no rebalancing). Everything that reads or
    // changes pointers_ settles it first; logically it is gone from the moment of the free.
    void settlePendingFree() const { const_cast<Lifetimes*>(this)->settlePendingFreeNow(); }
    void settlePendingFreeNow() {
        if (pending_free_) {
            pending_free_ = false;
            erasePointer(pending_free_it_);
        }
    }

    uint32_t process_;
    uint32_t phase_ = kNoPhase;
    LifetimeObserver* observer_ = nullptr;
    const format::Event* event_ = nullptr; // the event being applied, for the observer
    LiveAccounting& accounting_;
    size_t max_errors_;
    PointerMap pointers_;
    FlatMap<PointerMap::iterator> pointer_index_; // address -> its node in pointers_
    std::vector<PointerMap::node_type> spare_nodes_;
    uint64_t pointers_version_ = 0; // bumped by every insertion and erasure
    uint64_t hint_version_ = ~uint64_t{0};
    PointerMap::iterator hint_; // upper bound of the last erased address, while unchanged
    bool pending_free_ = false;
    PointerMap::iterator pending_free_it_;
    int64_t live_device_ = INT64_MIN;       // no device has it: none asked for yet
    uint64_t* live_device_bytes_ = nullptr; // live_by_device_[live_device_] (nodes are stable)
    std::unordered_map<uint64_t, Allocation> arrays_;
    std::map<uint64_t, Reservation> reservations_;
    std::unordered_map<uint64_t, PhysicalHandle> handles_;
    std::map<uint64_t, Mapping> mappings_;
    FreedAddresses freed_;
    TeardownIndex teardown_; // what a teardown ends, by context and device
    std::unordered_map<int, uint64_t> live_by_device_;
    std::map<LeakKey, LeakGroup> leaks_;
    std::vector<FreeError> errors_;
    ProcessCounters counters_;
    uint32_t gaps_ = 0;           // gaps seen so far
    uint32_t pause_gaps_ = 0;     // gaps_ right after the last pause (onPause); 0: none
    bool unlocated_loss_ = false; // drops: nothing is certain
};

} // namespace gmt::analyzer
