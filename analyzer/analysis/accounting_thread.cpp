#include "analysis/accounting_thread.h"

#include "analysis/live_accounting.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gmt::analyzer {

namespace {

// Spins before sleeping: a chunk takes the other thread some microseconds, about what
// going to sleep and being woken through the kernel costs each time.
constexpr int kSpins = 2000;

void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Waits until `counter` is no longer `seen`, and returns it.
uint64_t awaitChange(const std::atomic<uint64_t>& counter, uint64_t seen) {
    for (int i = 0; i < kSpins; ++i) {
        const uint64_t now = counter.load(std::memory_order_acquire);
        if (now != seen) {
            return now;
        }
        relax();
    }
    counter.wait(seen, std::memory_order_acquire);
    return counter.load(std::memory_order_acquire);
}

// Makes the first `written` operations visible to the thread and wakes it if it sleeps.
void expose(std::atomic<uint64_t>& published, uint64_t written) {
#if defined(__x86_64__)
    _mm_sfence(); // streamed stores (push()) are not ordered by the release store
#endif
    published.store(written, std::memory_order_release);
    published.notify_one();
}

// Waits until the thread has applied at least `count` operations.
void awaitApplied(const std::atomic<uint64_t>& applied, uint64_t count) {
    uint64_t now = applied.load(std::memory_order_acquire);
    while (now < count) {
        now = awaitChange(applied, now);
    }
}

} // namespace

AccountingThread::AccountingThread(LiveAccounting& target)
    : ring_(std::make_unique<ChargeOp[]>(kCapacity)) {
    thread_ = std::thread([this, &target, ring = ring_.get()] { run(target, ring); });
}

AccountingThread::~AccountingThread() {
    published_.store(written_ | kStop, std::memory_order_release);
    published_.notify_one();
    thread_.join();
}

bool AccountingThread::wanted() {
    if (const char* value = std::getenv("GPUMEMTRACE_ACCOUNTING_THREAD")) {
        if (std::strcmp(value, "0") != 0 && std::strcmp(value, "1") != 0) {
            throw std::invalid_argument("GPUMEMTRACE_ACCOUNTING_THREAD must be 0 or 1, not '" +
                                        std::string(value) + "'");
        }
        return *value == '1';
    }
    return std::thread::hardware_concurrency() >= kMinCores; // 0: unknown
}

void AccountingThread::publish() {
    expose(published_, written_);
    if (written_ + kChunk > kCapacity) {
        // The next chunk overwrites operations written a lap ago: they must have been applied.
        awaitApplied(applied_, written_ + kChunk - kCapacity);
    }
}

void AccountingThread::drain() {
    expose(published_, written_);
    awaitApplied(applied_, written_);
    if (failure_) {
        std::rethrow_exception(failure_);
    }
}

void AccountingThread::run(LiveAccounting& target, const ChargeOp* ring) {
    uint64_t done = 0;
    for (;;) {
        uint64_t published = published_.load(std::memory_order_acquire);
        while (published == done) {
            published = awaitChange(published_, published);
        }
        if ((published & kStop) != 0) {
            return; // what is left is dropped: the pass was abandoned or drained already
        }
        if (!failure_) {
            try {
                for (uint64_t i = done; i < published; ++i) {
                    apply(target, ring[i & kMask]);
                }
            } catch (...) {
                // Nothing more is applied (the accounting is incomplete now); the operations
                // are still consumed, so that the reading thread never waits for room.
                failure_ = std::current_exception();
            }
        }
        done = published;
        applied_.store(done, std::memory_order_release);
        applied_.notify_one();
    }
}

void AccountingThread::apply(LiveAccounting& target, const ChargeOp& op) {
    switch (op.type) {
    case ChargeOp::Type::Add:
        target.applyAdd(op.charge(), op.value);
        break;
    case ChargeOp::Type::Remove:
        target.applyRemove(op.charge(), op.value);
        break;
    case ChargeOp::Type::AddFolded:
        target.applyAddFolded(op.charge(), op.value);
        break;
    case ChargeOp::Type::BeginRemovals:
        target.applyBeginRemovals();
        break;
    case ChargeOp::Type::EndRemovals:
        target.applyEndRemovals(op.value);
        break;
    case ChargeOp::Type::Settle:
        target.applySettle();
        break;
    }
}

} // namespace gmt::analyzer
