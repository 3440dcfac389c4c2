#include "read/decode_pool.h"

#include "base/helper_threads.h"
#include "read/event_rebase.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace gmt::analyzer {

namespace {

// A batch's worst case once decoded: its bytes, an event (104 bytes) per 4 of them
// (frame_batch.cpp, kMinEventRecord), the other records' places (8 bytes per 2, in a
// vector that may have doubled) and the frames' places.
constexpr size_t kWorstBytesPerInputByte = 1 + sizeof(format::Event) / 4 + 8 + 1;
// Batches kept for reuse (their buffers stay mapped: no page faults per batch), and the
// largest kept.
constexpr size_t kMaxSpareBytes = 8u << 20;
// Batches kept for reuse beyond one per worker.
constexpr size_t kSpareBeyondWorkers = 4;

} // namespace

DecodePool::DecodePool(size_t workers, size_t budget) : worker_count_(workers), budget_(budget) {
    // recycle() runs in a stream's destructor: it must never need memory.
    spare_.reserve(worker_count_ + kSpareBeyondWorkers);
}

DecodePool::~DecodePool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : threads_) {
        t.join();
    }
}

size_t DecodePool::sharedWorkers() {
    if (const char* value = std::getenv("GPUMEMTRACE_DECODE_THREADS")) {
        size_t n = 0;
        const char* end = value + std::strlen(value);
        auto [ptr, ec] = std::from_chars(value, end, n);
        if (ec != std::errc() || ptr != end || *value == '\0' || n > kMaxWorkers) {
            throw std::invalid_argument("GPUMEMTRACE_DECODE_THREADS must be a number from 0 to " +
                                        std::to_string(kMaxWorkers) + ", not '" +
                                        std::string(value) + "'");
        }
        return n;
    }
    const unsigned cores = std::thread::hardware_concurrency(); // 0: unknown
    return std::min<size_t>(cores > 1 ? cores - 1 : 1, kDefaultWorkers);
}

DecodePool& DecodePool::shared() {
    static DecodePool pool(sharedWorkers(), kSharedBudget);
    return pool;
}

void DecodePool::start() {
    started_ = true;
    // Fewer where fewer can be started: every reader still reads its trace to the end (none:
    // each decodes its own batches).
    worker_count_ = startHelperThreads(threads_, worker_count_, [this] { work(); });
}

std::unique_ptr<DecodePool::Stream> DecodePool::open(const TraceFile& file, uint64_t offset,
                                                     size_t batch_bytes) {
    std::unique_ptr<Stream> s(new Stream(*this, file, offset, batch_bytes));
    {
        std::lock_guard lock(mutex_);
        if (!started_) {
            start();
        }
        streams_.push_back(s.get());
    }
    changed_.notify_all();
    return s;
}

size_t DecodePool::worstBatchBytes(size_t batch_bytes) {
    return batch_bytes * kWorstBytesPerInputByte;
}

DecodePool::Usage DecodePool::usage() const {
    std::lock_guard lock(mutex_);
    return {charged_, peak_charged_};
}

bool DecodePool::canScan(const Stream& s) const {
    // Ahead of its reader: enough batches to keep every worker busy on one trace.
    const size_t ahead = worker_count_ + 2;
    return !s.closed_ && !s.scan_ended_ && !s.scanning_ && s.slots_.size() < ahead &&
           charged_ + worstBatchBytes(s.batch_bytes_) <= budget_;
}

void DecodePool::charge(Slot& slot, size_t bytes) {
    charged_ = charged_ - slot.charge + bytes;
    peak_charged_ = std::max(peak_charged_, charged_);
    slot.charge = bytes;
}

std::unique_ptr<FrameBatch> DecodePool::spareBatch() {
    if (spare_.empty()) {
        return std::make_unique<FrameBatch>();
    }
    std::unique_ptr<FrameBatch> b = std::move(spare_.back());
    spare_.pop_back();
    return b;
}

void DecodePool::recycle(std::unique_ptr<FrameBatch> batch) {
    if (batch && spare_.size() < spare_.capacity() && batch->heldBytes() <= kMaxSpareBytes) {
        spare_.push_back(std::move(batch));
    }
}

DecodePool::Slot& DecodePool::claim(Stream& s) {
    // What the slot needs is allocated before anything changes: out of memory here leaves
    // the stream as it was, and resolve() needs nothing more.
    std::unique_ptr<FrameBatch> batch = spareBatch();
    if (batch->heldBytes() > worstBatchBytes(s.batch_bytes_)) {
        batch = std::make_unique<FrameBatch>(); // grown for a larger batch
    }
    auto coder = std::make_unique<format::EventCoder>();
    const uint64_t seq = s.front_seq_ + s.slots_.size();
    Slot& slot = s.slots_.emplace_back(); // or no effect, if it throws
    slot.batch = std::move(batch);
    slot.base = std::move(coder);
    FrameBatch& b = *slot.batch;
    // Every batch before it decoded and passed on: the state it starts from is known.
    b.based = seq == s.chain_seq_ && !s.chain_waits_;
    b.coder = b.based ? *s.chain_base_ : zeroCoder();
    s.scanning_ = true;
    ++s.busy_;
    charge(slot, worstBatchBytes(s.batch_bytes_));
    return slot;
}

void DecodePool::scanAndDecode(Stream& s, Slot& slot, std::unique_lock<std::mutex>& lock,
                               EventStores stores) {
    FrameBatch& b = *slot.batch;
    const uint64_t offset = s.scan_offset_;
    lock.unlock();
    try {
        scanFrames(s.file_, offset, s.batch_bytes_, b);
    } catch (...) {
        slot.error = std::current_exception();
    }
    lock.lock();
    s.scanning_ = false;
    s.scan_offset_ = b.nextOffset();
    s.scan_ended_ = s.scan_ended_ || slot.error || b.end;
    changed_.notify_all(); // the next batch can be read now
    if (!slot.error && !b.large) {
        lock.unlock();
        try {
            decodeFrames(b, stores);
        } catch (...) {
            slot.error = std::current_exception();
        }
        lock.lock();
    }
    charge(slot, b.heldBytes());
    slot.state = slot.error || b.based || b.large ? Slot::State::Ready : Slot::State::NeedsBase;
    resolve(s);
    --s.busy_;
    changed_.notify_all();
}

void DecodePool::rebase(Slot& slot, std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    rebaseFrames(*slot.batch, *slot.base);
    lock.lock();
    slot.base.reset();
    slot.state = Slot::State::Ready;
}

void DecodePool::resolve(Stream& s) {
    while (!s.chain_waits_) {
        const uint64_t i = s.chain_seq_ - s.front_seq_;
        if (i >= s.slots_.size()) {
            return;
        }
        Slot& slot = s.slots_[i];
        if (slot.state == Slot::State::Working) {
            return;
        }
        if (slot.error || slot.batch->large) {
            // Nothing after a failed batch is read; a large one is streamed by the reader,
            // which passes its state on (streamed).
            s.chain_waits_ = true;
            return;
        }
        if (slot.state == Slot::State::NeedsBase) {
            // The slot's coder (claim()) becomes the state after it; the state before it
            // becomes its base.
            *slot.base = slot.batch->coder;
            rebaseCoder(*slot.base, *s.chain_base_);
            std::swap(slot.base, s.chain_base_);
            slot.state = Slot::State::NeedsRebase;
        } else {
            *s.chain_base_ = slot.batch->coder;
        }
        ++s.chain_seq_;
    }
}

void DecodePool::work() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        // Corrections first: a reader may be waiting for one.
        bool worked = false;
        for (Stream* s : streams_) {
            for (Slot& slot : s->slots_) {
                if (!s->closed_ && slot.state == Slot::State::NeedsRebase) {
                    slot.state = Slot::State::Working;
                    ++s->busy_;
                    rebase(slot, lock);
                    --s->busy_;
                    changed_.notify_all();
                    worked = true;
                    break;
                }
            }
            if (worked) {
                break;
            }
        }
        if (worked) {
            continue;
        }
        for (size_t i = 0; i < streams_.size() && !worked; ++i) {
            Stream& s = *streams_[(next_stream_ + i) % streams_.size()];
            if (canScan(s)) {
                Slot* slot = nullptr;
                try {
                    slot = &claim(s);
                } catch (const std::bad_alloc&) {
                    // Nothing changed; its reader decodes the batch itself, and reports
                    // being out of memory where it can (an exception leaving this thread
                    // would end the process).
                    break;
                }
                next_stream_ = (next_stream_ + i + 1) % streams_.size();
                scanAndDecode(s, *slot, lock, workerStores());
                worked = true;
            }
        }
        if (!worked) {
            changed_.wait(lock);
        }
    }
}

DecodePool::Stream::Stream(DecodePool& pool, const TraceFile& file, uint64_t offset,
                           size_t batch_bytes)
    : pool_(pool), file_(file), batch_bytes_(batch_bytes), scan_offset_(offset),
      chain_base_(std::make_unique<format::EventCoder>()) {}

DecodePool::Stream::~Stream() {
    std::unique_lock lock(pool_.mutex_);
    closed_ = true;
    pool_.changed_.wait(lock, [this] { return busy_ == 0; });
    for (Slot& slot : slots_) {
        pool_.charged_ -= slot.charge;
        pool_.recycle(std::move(slot.batch));
    }
    pool_.charged_ -= current_charge_;
    pool_.recycle(std::move(current_));
    std::erase(pool_.streams_, this);
    pool_.changed_.notify_all(); // the budget it held is free
}

FrameBatch* DecodePool::Stream::next() {
    std::unique_lock lock(pool_.mutex_);
    if (current_) {
        pool_.charged_ -= std::exchange(current_charge_, 0);
        pool_.recycle(std::move(current_));
        pool_.changed_.notify_all();
    }
    for (;;) {
        if (!slots_.empty()) {
            Slot& front = slots_.front();
            if (front.state == Slot::State::NeedsRebase) {
                front.state = Slot::State::Working;
                ++busy_;
                pool_.rebase(front, lock);
                --busy_;
                continue;
            }
            if (front.state != Slot::State::Ready) {
                pool_.changed_.wait(lock);
                continue;
            }
            current_ = std::move(front.batch);
            current_charge_ = front.charge;
            std::exception_ptr error = front.error;
            slots_.pop_front();
            ++front_seq_;
            if (error) {
                std::rethrow_exception(error);
            }
            return current_.get();
        }
        if (scan_ended_) {
            return nullptr;
        }
        if (scanning_) {
            pool_.changed_.wait(lock);
            continue;
        }
        // Nothing decoded ahead, nobody reading: read it here.
        pool_.scanAndDecode(*this, pool_.claim(*this), lock, EventStores::Cached);
    }
}

void DecodePool::Stream::streamed(const format::EventCoder& end) {
    {
        std::lock_guard lock(pool_.mutex_);
        *chain_base_ = end;
        ++chain_seq_;
        chain_waits_ = false;
        pool_.resolve(*this);
    }
    pool_.changed_.notify_all();
}

} // namespace gmt::analyzer
