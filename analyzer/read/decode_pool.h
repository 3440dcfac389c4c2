// Decoding ahead: a few worker threads read and decode the log frames of every trace
// being read (FrameBatch), batch after batch, while the readers hand out the records of
// the batches already decoded. A reader takes the batches of its trace in file order and
// exactly as one reading the log by itself would see them; a batch decoded before the
// delta state ahead of it was known is corrected first (event_rebase.h).
//
// Memory is bounded: batches decoded ahead, of all traces together, hold at most the
// pool's budget (a batch is charged its worst case, an event per 4 bytes, until it is
// decoded), and each trace has a few at most. No thread ever waits for room: a reader
// whose next batch nobody has started decodes it itself, so that a trace is read to its
// end whatever the budget, the number of traces or of workers (0 workers: every reader
// decodes its own batches, one at a time).
//
// Out of memory on a worker never ends the process: a batch it could not start is left to
// its reader, one it could not read or decode carries the failure to its reader (as an
// I/O error does), and a worker that cannot be started is one fewer.
#pragma once

#include "read/frame_batch.h"
#include "read/trace_file.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gmt::analyzer {

class DecodePool {
  public:
    // `workers` threads (started with the first stream); `budget`: the bytes that batches
    // decoded ahead may hold, all streams together.
    DecodePool(size_t workers, size_t budget);
    ~DecodePool();
    DecodePool(const DecodePool&) = delete;
    DecodePool& operator=(const DecodePool&) = delete;

    // The pool every trace reader uses: a worker per core but one (the reading thread
    // has work of its own), at least one and at most kDefaultWorkers, or
    // GPUMEMTRACE_DECODE_THREADS of them (0: each reader decodes its own log); 64 MiB.
    // Throws std::invalid_argument (once) for a value of that variable that is not a
    // number up to kMaxWorkers.
    static DecodePool& shared();
    static constexpr size_t kSharedBudget = 64u << 20;
    static constexpr size_t kMaxWorkers = 256;
    // Two workers outpace one reading thread; more only decode batches before the state
    // ahead of them is known, each corrected again (event_rebase.h), and take the cores
    // other readers (`check --jobs`) need: on 16 cores, 15 workers cost twice the CPU of
    // two and were slower, alone and with 16 readers (docs/performance.md, "Analyzer").
    static constexpr size_t kDefaultWorkers = 2;

    size_t workers() const { return worker_count_; }
    size_t budget() const { return budget_; }
    // How a worker writes the events it decodes (event_stores.h): around the cache when it
    // is the only one, through it when there are two or more. A plain store waits for the
    // line the reading thread read last: on 2 cores the one worker sets the pace beside the
    // reading thread, and that wait cost more than the events' trip back from memory
    // (docs/performance.md, "Decoded events written around the cache"). Two workers have
    // time to wait, the reading thread alone sets the pace, and it finds the events in the
    // cache (docs/performance.md, "Two workers' stores through the cache"). It counts the
    // workers started, which may be fewer than were asked for.
    EventStores workerStores() const {
        return worker_count_ >= 2 ? EventStores::Cached : EventStores::Streamed;
    }

    // What batches in flight hold now, and the most they held at once.
    struct Usage {
        size_t held = 0;
        size_t peak = 0;
    };
    Usage usage() const;
    // The most one batch of `batch_bytes` may hold: what the budget is charged for a batch
    // until it is decoded. A batch its reader decodes itself is charged beyond the budget.
    static size_t worstBatchBytes(size_t batch_bytes);

    class Stream;
    // Starts decoding the log of `file` (which must outlive the stream) from `offset`, in
    // batches of about `batch_bytes`.
    std::unique_ptr<Stream> open(const TraceFile& file, uint64_t offset, size_t batch_bytes);

  private:
    static size_t sharedWorkers();
    // A batch of a stream, from when it is started to when its reader takes it.
    struct Slot {
        enum class State {
            Working,     // a thread reads, decodes or corrects it
            NeedsBase,   // decoded from zeros; the state before it is not known yet
            NeedsRebase, // decoded from zeros; `base` is the state before it
            Ready,       // exact (or large, or failed: `error`)
        };
        std::unique_ptr<FrameBatch> batch;
        State state = State::Working;
        size_t charge = 0; // bytes counted against the budget
        // Allocated when it is claimed, so that passing the delta state on (resolve())
        // never needs memory; once NeedsRebase, the state before it.
        std::unique_ptr<format::EventCoder> base;
        std::exception_ptr error; // reading it threw (an I/O error): its reader rethrows
    };

    void start();
    void work();
    // Starts the next batch of `s` (under the lock): its slot, charged, with the delta
    // state it is decoded from.
    Slot& claim(Stream& s);
    // Reads and decodes the batch of `slot`, which `lock` is released around.
    // `stores`: workerStores() when a worker decodes it, Cached when its reader does.
    void scanAndDecode(Stream& s, Slot& slot, std::unique_lock<std::mutex>& lock,
                       EventStores stores);
    void rebase(Slot& slot, std::unique_lock<std::mutex>& lock);
    // Passes on the delta state through the batches decoded in order (under the lock).
    void resolve(Stream& s);
    void charge(Slot& slot, size_t bytes);
    std::unique_ptr<FrameBatch> spareBatch();
    void recycle(std::unique_ptr<FrameBatch> batch);
    bool canScan(const Stream& s) const;

    size_t worker_count_;
    size_t budget_;
    mutable std::mutex mutex_;
    std::condition_variable changed_; // a batch or a stream changed state
    std::vector<std::thread> threads_;
    bool started_ = false;
    bool stopping_ = false;
    std::vector<Stream*> streams_;
    size_t next_stream_ = 0; // round robin among streams wanting work
    size_t charged_ = 0;     // bytes held by batches in flight, all streams
    size_t peak_charged_ = 0;
    std::vector<std::unique_ptr<FrameBatch>> spare_;
};

// One trace's log, decoded ahead. Used by one thread (its reader).
class DecodePool::Stream {
  public:
    ~Stream(); // stops decoding ahead; waits for the workers busy with it
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // The next batch in file order, decoded and exact (except a `large` one: the caller
    // streams it from the true delta state, then calls streamed()); valid until the next
    // call. Null after the batch whose `end` is set.
    FrameBatch* next();
    // The large batch just taken was streamed; `end` is the delta state after it.
    void streamed(const format::EventCoder& end);

  private:
    friend class DecodePool;
    Stream(DecodePool& pool, const TraceFile& file, uint64_t offset, size_t batch_bytes);

    DecodePool& pool_;
    const TraceFile& file_;
    size_t batch_bytes_;
    // Guarded by the pool's mutex:
    uint64_t scan_offset_;
    bool scan_ended_ = false; // a batch with `end` was scanned: nothing after it
    bool scanning_ = false;   // one thread reads the next batch at a time
    bool closed_ = false;
    int busy_ = 0; // threads working on its batches
    std::deque<Slot> slots_;
    uint64_t front_seq_ = 0; // batch number of slots_.front()
    // The delta state before batch chain_seq_, once every batch before it is decoded.
    uint64_t chain_seq_ = 0;
    std::unique_ptr<format::EventCoder> chain_base_;
    bool chain_waits_ = false; // on a large batch, until streamed()
    std::unique_ptr<FrameBatch> current_;
    size_t current_charge_ = 0;
};

} // namespace gmt::analyzer
