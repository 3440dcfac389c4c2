// Allocation lifetimes of one traced process with CUDA's semantics: pointers (device,
// pitch, managed, pool, pinned host) live until freed; arrays until destroyed; virtual
// memory in three layers kept apart — reservations (address space, no bytes), physical
// handles (bytes until released *and* unmapped) and mappings; teardown ends what a
// context owned except VMM handles and pool memory. Detects double, invalid and
// mismatched frees. Live bytes are charged to the shared LiveAccounting.
#pragma once

#include "live_accounting.h"

#include <gpumemtrace/trace_format.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gmt::analyzer {

struct Allocation {
    uint64_t address = 0;
    uint64_t size = 0;   // bytes asked for: what is counted
    uint64_t extent = 0; // address range held (>= size for pitched allocations)
    uint64_t context = 0;
    uint64_t time_ns = 0;
    uint32_t stack = 0;
    int device = -1;
    format::Kind kind = format::Kind::None;
    format::Api api = format::Api::Unknown;
};

struct Reservation {
    uint64_t size = 0;
    uint32_t stack = 0;
};

struct PhysicalHandle {
    uint64_t size = 0;
    uint64_t time_ns = 0;
    uint32_t stack = 0;
    int device = -1;
    bool host_located = false;
    bool released = false;
    uint32_t mappings = 0;
    format::Api api = format::Api::Unknown;
};

struct Mapping {
    uint64_t size = 0;
    uint64_t handle = 0;
};

enum class ErrorType { DoubleFree, InvalidFree, MismatchedFree };
std::string_view errorTypeName(ErrorType t);

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
};

// Leaks are aggregated as they become known (teardown) and at the end.
struct LeakKey {
    uint32_t stack = 0;
    format::Kind kind = format::Kind::None;
    format::Api api = format::Api::Unknown;
    bool released_by_teardown = false;
    auto operator<=>(const LeakKey&) const = default;
};
struct LeakGroup {
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    std::map<int, uint64_t> bytes_by_device;
};

struct ProcessCounters {
    uint64_t allocations = 0;
    uint64_t frees = 0;
    uint64_t failed_allocations = 0;
    uint64_t errors = 0;
    uint64_t teardowns = 0;
    uint64_t implicit_ends = 0; // a new allocation over a live one (a free not recorded)
    std::array<uint64_t, kKindCount> allocations_by_kind{};
};

class Lifetimes {
  public:
    Lifetimes(uint32_t process, LiveAccounting& accounting, size_t max_errors = 1000);

    // Returns true when the event is a failed allocation (the caller diagnoses it).
    bool onEvent(const format::Event& e);
    // Everything still live becomes a leak; call once, at the end.
    void finish();

    const std::map<uint64_t, Allocation>& pointers() const { return pointers_; }
    const std::map<uint64_t, Reservation>& reservations() const { return reservations_; }
    const std::map<uint64_t, Mapping>& mappings() const { return mappings_; }
    const std::unordered_map<uint64_t, PhysicalHandle>& handles() const { return handles_; }
    size_t liveCount() const { return pointers_.size() + arrays_.size() + handles_.size(); }
    uint64_t liveDeviceBytes(int device) const;

    const std::map<LeakKey, LeakGroup>& leaks() const { return leaks_; }
    const std::vector<FreeError>& errors() const { return errors_; }
    const ProcessCounters& counters() const { return counters_; }

  private:
    struct Freed {
        uint32_t allocation_stack = 0;
        format::Api api = format::Api::Unknown;
        bool by_teardown = false;
    };

    Charge charge(const Allocation& a) const;
    Charge charge(const PhysicalHandle& h) const;
    void addAllocation(const format::Event& e);
    void onFree(const format::Event& e);
    void endAllocation(const Allocation& a, uint64_t time_ns, bool by_teardown);
    void endHandle(uint64_t handle, uint64_t time_ns);
    void onTeardown(const format::Event& e);
    void rememberFreed(uint64_t address, const Freed& f);
    void error(ErrorType type, const format::Event& e, uint32_t alloc_stack, format::Api alloc_api,
               std::string detail);
    void leak(const LeakKey& key, uint64_t bytes, int device);

    uint32_t process_;
    LiveAccounting& accounting_;
    size_t max_errors_;
    std::map<uint64_t, Allocation> pointers_;
    std::unordered_map<uint64_t, Allocation> arrays_;
    std::map<uint64_t, Reservation> reservations_;
    std::unordered_map<uint64_t, PhysicalHandle> handles_;
    std::map<uint64_t, Mapping> mappings_;
    std::unordered_map<uint64_t, Freed> freed_;
    std::deque<uint64_t> freed_order_; // bounds freed_: oldest forgotten first
    std::unordered_set<uint64_t> user_contexts_;
    std::unordered_map<uint64_t, int> context_device_; // learned primary contexts
    std::unordered_map<int, uint64_t> live_by_device_;
    std::map<LeakKey, LeakGroup> leaks_;
    std::vector<FreeError> errors_;
    ProcessCounters counters_;
};

} // namespace gmt::analyzer
