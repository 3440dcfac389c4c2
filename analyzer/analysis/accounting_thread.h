// The live-byte accounting (live_accounting.h) on a thread of its own, for hosts with cores
// to spare. The accounting is about two fifths of the reading thread's work per event
// (docs/performance.md, "The accounting's share"), and nothing the reading thread does
// waits for it: the reading thread appends each charge to a ring and goes on, and this
// thread applies them, in the order they were made, to the same LiveAccounting. What is read
// during the pass is kept on the reading thread as well (live_totals.h); everything else is
// read after drain(), which waits until the thread has applied all.
//
// One writer, one reader: the reading thread publishes how many operations it wrote, a
// chunk at a time (one shared store per chunk, not per charge); the thread publishes how
// many it applied. Each waits on the other's counter (spinning a while, then C++20's atomic
// wait) only when the ring is full or empty.
#pragma once

#include "analysis/charge.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gmt::analyzer {

class LiveAccounting;

// One operation on the accounting, in the order the reading thread made it: a charge
// without its site (the accounting finds it: add() returned none), in half a cache line
// (two fill one: streamed stores, push(), combine whole lines).
struct alignas(32) ChargeOp {
    enum class Type : uint8_t { Add, Remove, AddFolded, BeginRemovals, EndRemovals, Settle };
    uint32_t process = 0;
    uint32_t stack = 0;
    int device = -1;
    format::Kind kind = format::Kind::None;
    bool resident = true;
    Type type = Type::Add;
    uint64_t bytes = 0;
    uint64_t value = 0; // the time (ns); for AddFolded, the allocations folded

    Charge charge() const { return Charge{process, stack, device, kind, resident, bytes, kNoSite}; }
};
static_assert(sizeof(ChargeOp) == 32 && offsetof(ChargeOp, kind) == 12 &&
              offsetof(ChargeOp, resident) == 13 && offsetof(ChargeOp, type) == 14 &&
              offsetof(ChargeOp, bytes) == 16 && offsetof(ChargeOp, value) == 24);

class AccountingThread {
  public:
    // Starts the thread that applies to `target`.
    explicit AccountingThread(LiveAccounting& target);
    // Stops the thread: what it has not applied yet is dropped (drain() first to keep it).
    ~AccountingThread();
    AccountingThread(const AccountingThread&) = delete;
    AccountingThread& operator=(const AccountingThread&) = delete;

    // Whether the accounting should run on a thread of its own: GPUMEMTRACE_ACCOUNTING_THREAD
    // (0 or 1) when set, else when the host has the cores (kMinCores). Throws
    // std::invalid_argument for any other value.
    static bool wanted();
    static constexpr unsigned kMinCores = 4;

    void push(const Charge& c, ChargeOp::Type type, uint64_t value) {
        ChargeOp& op = ring_[written_ & kMask];
#if defined(__x86_64__)
        // Streamed past the caches: the thread read this line a lap ago, and an ordinary
        // store would first have to take it back from that core (a stall of each line,
        // measured at about a third of the reading thread's time). The layout is
        // ChargeOp's (asserted above).
        auto* words = reinterpret_cast<long long*>(&op);
        _mm_stream_si64(words,
                        static_cast<long long>(uint64_t{c.process} | uint64_t{c.stack} << 32));
        _mm_stream_si64(words + 1,
                        static_cast<long long>(uint64_t{static_cast<uint32_t>(c.device)} |
                                               uint64_t{static_cast<uint8_t>(c.kind)} << 32 |
                                               uint64_t{c.resident} << 40 |
                                               uint64_t{static_cast<uint8_t>(type)} << 48));
        _mm_stream_si64(words + 2, static_cast<long long>(c.bytes));
        _mm_stream_si64(words + 3, static_cast<long long>(value));
#else
        op = ChargeOp{c.process, c.stack, c.device, c.kind, c.resident, type, c.bytes, value};
#endif
        if ((++written_ & (kChunk - 1)) == 0) {
            publish();
        }
    }
    // Waits until every operation pushed is applied; the target may be read then. Rethrows
    // what applying one threw (std::bad_alloc), after which nothing more is applied.
    void drain();

  private:
    static constexpr uint64_t kCapacity = uint64_t{1} << 15; // 1 MiB of operations
    static constexpr uint64_t kMask = kCapacity - 1;
    static constexpr uint64_t kChunk = uint64_t{1} << 11; // published together
    // Set in published_ when the thread is to stop.
    static constexpr uint64_t kStop = uint64_t{1} << 63;

    // Makes what was written visible to the thread, then waits, if it must, until the next
    // chunk has room.
    void publish();
    void run(LiveAccounting& target, const ChargeOp* ring);
    static void apply(LiveAccounting& target, const ChargeOp& op);

    // Each thread's own on a cache line of its own, the shared counters each on theirs:
    // a line one thread writes and the other reads moves between their cores at each
    // write. The thread reads the ring's address once, when it starts.
    alignas(64) std::unique_ptr<ChargeOp[]> ring_;
    uint64_t written_ = 0; // the reading thread's alone
    alignas(64) std::atomic<uint64_t> published_{0};
    alignas(64) std::atomic<uint64_t> applied_{0};
    std::exception_ptr failure_; // set by the thread before it publishes applied_
    alignas(64) std::thread thread_;
};

} // namespace gmt::analyzer
