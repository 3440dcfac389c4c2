#include "recorder.h"

#include "clock.h"
#include "current_context.h"
#include "event_clock.h"
#include "failure_file.h"
#include "log_writer.h"
#include "logging.h"
#include "output_path.h"
#include "phase_accounting.h"
#include "phase_window.h"
#include "printable.h"
#include "process_info.h"
#include "rank_info.h"
#include "ring_buffer.h"
#include "signal_handlers.h"
#include "stack_capture.h"
#include "trace_file.h"
#include "writer_thread.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <new>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/file_layout.h>
#include <gpumemtrace/format/record_codec.h>
#include <gpumemtrace/format/ring_slot.h>

namespace gmt::preload {

struct Session {
    TraceFile file;
    RingBuffer ring;
    std::unique_ptr<Aggregator> aggregator; // GPUMEMTRACE_MODE=aggregate
    LogWriter writer{file, ring};
    PhaseAccounting accounting; // fed by the writer (not when aggregated)
    WriterThread thread;
    pid_t pid = 0;
};

namespace {

struct OpenPositions {
    uint64_t first;
    uint64_t end;
};

thread_local uint32_t t_tid __attribute__((tls_model("initial-exec"))) = 0;
// The ring positions this thread has claimed and not yet committed ([first, end), empty
// when equal): the end of the trace must not wait for them when it runs on this thread (a
// fatal signal in the middle of a call, exit from inside a traced call's callback).
thread_local OpenPositions t_open __attribute__((tls_model("initial-exec")));

uint32_t currentTid() {
    if (t_tid == 0) {
        t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
    }
    return t_tid;
}

uint32_t ringSlotsFor(uint64_t bytes) {
    uint64_t slots = bytes / format::kSlotSize;
    slots = std::clamp<uint64_t>(slots, format::kMinRingSlots, format::kMaxRingSlots);
    return static_cast<uint32_t>(std::bit_floor(slots));
}

// Said once per record type: an encoder that overran its buffer. The record is left out
// rather than written cut, which would end the readable trace there.
void reportOverflow(format::RecordTag tag, size_t size) {
    static std::atomic<uint32_t> reported{0};
    const uint32_t bit = 1u << (static_cast<uint32_t>(tag) % 32);
    if (!(reported.fetch_or(bit) & bit)) {
        logger().error("a record of type {} ({} bytes or more) does not fit its buffer; left "
                       "out of the trace",
                       static_cast<int>(tag), size);
    }
}

// Pushes the record `body` holds (tag, length, body) into consecutive slots, unless its
// encoder overran it. Returns the positions it took; none ({kNoPosition, kNoPosition}) when
// it was left out or dropped.
OpenPositions pushRecord(Session* s, format::RecordTag tag, const format::ByteWriter& body) {
    constexpr OpenPositions kNone{RingBuffer::kNoPosition, RingBuffer::kNoPosition};
    uint8_t buf[16 * 1024];
    format::ByteWriter w(buf, sizeof buf);
    format::appendRecord(w, tag, body.data(), body.size());
    if (!body.ok() || !w.ok()) {
        reportOverflow(tag, body.size());
        return kNone;
    }
    auto length = static_cast<uint32_t>(w.size());
    uint32_t parts = format::recordSlots(length);
    uint64_t pos = s->ring.claim(parts);
    if (pos == RingBuffer::kNoPosition) {
        return kNone;
    }
    t_open = {pos, pos + parts};
    format::splitRecord(buf, length,
                        [&](uint32_t part) -> format::Slot& { return s->ring.at(pos + part); });
    for (uint32_t i = 0; i < parts; ++i) {
        s->ring.commit(pos + i);
    }
    t_open = {};
    return {pos, pos + parts};
}

// Encodes a record body whose size follows its data (a command line, paths) into `body`,
// grown until it fits; false when even kMaxRecordSize, the most a reader takes, is too
// small.
template <typename Encode> bool encodeSized(std::vector<uint8_t>& body, Encode&& encode) {
    for (size_t capacity = 4096;;
         capacity = std::min<size_t>(capacity * 2, format::kMaxRecordSize)) {
        body.resize(capacity);
        format::ByteWriter w(body.data(), body.size());
        encode(w);
        if (w.ok()) {
            body.resize(w.size());
            return true;
        }
        if (capacity == format::kMaxRecordSize) {
            return false;
        }
    }
}

// One of the records written ahead of the ring (header, devices); false when it cannot be.
template <typename Encode>
bool writeDirect(LogWriter& writer, format::RecordTag tag, Encode&& encode) {
    std::vector<uint8_t> body;
    return encodeSized(body, encode) && writer.writeDirect(tag, body.data(), body.size());
}

// The ring wants draining: wake the writer, or drain here when there is none (it failed
// to start).
void wakeWriter(void* ctx) {
    auto* s = static_cast<Session*>(ctx);
    if (s->thread.running()) {
        s->thread.wake();
    } else {
        s->writer.tryDrain();
    }
}

void drainHere(void* ctx) {
    static_cast<Session*>(ctx)->writer.tryDrain();
}

// Fills the claimed slot and publishes it: from here on the event is in the file.
void publishEvent(Session* s, uint64_t pos, const format::Event& e) {
    format::fillEventSlot(s->ring.at(pos), e);
    s->ring.commit(pos);
    t_open = {};
}

void forkPrepare() {
    Recorder::instance().beforeFork();
}
void forkParent() {
    Recorder::instance().afterForkParent();
}
void forkChild() {
    Recorder::instance().afterForkChild();
}

} // namespace

Recorder& Recorder::create() {
    // Constructed on first use (a library's constructor may call CUDA before ours runs),
    // and never destroyed: exit() runs static destructors while the program's other threads
    // may still be inside traced calls (until exit_group ends them), and those calls read
    // the recorder's tables. onUnload (below) ends the trace and frees nothing; the memory
    // goes with the process. tests/recorder/exit_destructors_check.py keeps it so.
    alignas(Recorder) static unsigned char storage[sizeof(Recorder)];
    static Recorder* const recorder = new (storage) Recorder;
    instance_.store(recorder, std::memory_order_release);
    return *recorder;
}

Recorder::Recorder() : config_(readConfig()) {
    initStackCapture();
    torch_.start(config_.caching_allocator, &Recorder::recordBlock,
                 &Recorder::reportCachingAllocator);
    EventClock::init();
    pthread_atfork(forkPrepare, forkParent, forkChild);
    if (!config_.enabled) {
        logger().info("GPUMEMTRACE_ENABLE=0: not tracing");
    }
}

Session* Recorder::sessionSlow() {
    Session* s = nullptr;
    if (creation_failed_.load(std::memory_order_relaxed)) {
        return s;
    }
    std::lock_guard lock(create_mutex_);
    s = session_.load(std::memory_order_relaxed);
    if (!s && !creation_failed_.load(std::memory_order_relaxed)) {
        s = createSession();
        if (s) {
            session_.store(s, std::memory_order_release);
        } else {
            creation_failed_.store(true);
        }
    }
    return s;
}

Session* Recorder::createSession() {
    reportConfigProblems(config_); // the first CUDA call: now the process has a say
    auto* s = new Session;
    s->pid = getpid();
    std::string path = expandOutputTemplate(config_.output_template, {s->pid, detectRank().rank});
    // The program runs on untraced: it says why, on its stderr and to `record`.
    auto untraced = [&](const std::string& why) -> Session* {
        logger().error("cannot create trace file {}: {}; tracing is off", printable(path),
                       printable(why));
        appendFailure(config_.failure_file, s->pid, path, why);
        delete s;
        return nullptr;
    };
    std::string why;
    // Aggregated: two checkpoint regions, half the budget each (format/aggregate.h).
    const uint64_t region =
        config_.aggregate
            ? config_.aggregate_budget / 2 / format::kCheckpointAlign * format::kCheckpointAlign
            : 0;
    if (!createParentDirectories(path, &why) ||
        !s->file.create(path, ringSlotsFor(config_.buffer_bytes), why, region)) {
        return untraced(why);
    }
    if (region) {
        s->aggregator = std::make_unique<Aggregator>(region);
        s->writer.aggregate(s->aggregator.get());
    } else {
        s->writer.account(&s->accounting);
    }
    s->ring.attach(s->file.slots(), s->file.ringSlots(), &s->file.prologue().dropped_events,
                   config_.on_full == OnFull::Drop, {&wakeWriter, &drainHere, s});

    // Header and devices go straight to the log: every later record refers to them.
    python_.start(config_.python);
    format::HeaderInfo header = collectHeader(config_.stack_depth);
    header.python_version = python_.version();
    header.python_status = python_.status();
    bool written = writeDirect(s->writer, format::RecordTag::Header,
                               [&](format::ByteWriter& w) { format::encodeHeader(w, header); });
    for (const format::DeviceInfo& d : collectDevices()) {
        written =
            written && writeDirect(s->writer, format::RecordTag::Device,
                                   [&](format::ByteWriter& w) { format::encodeDevice(w, d); });
    }
    if (!written || !s->writer.flushDirect()) {
        // A trace without its header is no trace: none rather than one no reader can use.
        const std::string created = s->file.path();
        s->file.close();
        ::unlink(created.c_str());
        return untraced("cannot write its header");
    }
    if (!s->thread.start(s->writer, s->ring)) {
        logger().warn("cannot start the writer thread; draining inline");
    }
    installSignalHandlers();
    if (config_.start_paused) {
        // Before the session is published: the first call already finds it paused.
        std::atomic_ref<uint32_t>(s->file.prologue().control)
            .store(format::kControlPaused, std::memory_order_relaxed);
        recordRecording(s, format::RecordingChange::Pause, format::RecordingCause::Start);
        pause_recorded_.store(true, std::memory_order_relaxed);
        logger().info("tracing to {}, paused (GPUMEMTRACE_START=paused)",
                      printable(s->file.path()));
    } else {
        logger().info("tracing to {}", printable(s->file.path()));
    }
    return s;
}

inline bool Recorder::recording(Session* s) {
    const uint32_t control =
        std::atomic_ref<uint32_t>(s->file.prologue().control).load(std::memory_order_relaxed);
    if (control == format::kControlRecording) [[likely]] {
        return true;
    }
    return recordingSlow(s);
}

bool Recorder::recordingSlow(Session* s) {
    std::atomic_ref<uint32_t> word(s->file.prologue().control);
    uint32_t control = word.load(std::memory_order_relaxed);
    if (control == format::kControlResumeRequested &&
        word.compare_exchange_strong(control, format::kControlRecording,
                                     std::memory_order_relaxed)) {
        // This thread took the resume: the record goes before its own call's event. A
        // pause that no call saw (paused and resumed in between) leaves no record at all.
        if (pause_recorded_.exchange(false, std::memory_order_relaxed)) {
            recordRecording(s, format::RecordingChange::Resume, format::RecordingCause::Control);
        }
        return true;
    }
    if (control == format::kControlRecording) {
        return true; // another thread took the resume meanwhile
    }
    // Paused (any value the recorder does not know counts as paused too): said once.
    if (!pause_recorded_.load(std::memory_order_relaxed) &&
        !pause_recorded_.exchange(true, std::memory_order_relaxed)) {
        recordRecording(s, format::RecordingChange::Pause, format::RecordingCause::Control);
    }
    return false;
}

void Recorder::recordRecording(Session* s, format::RecordingChange change,
                               format::RecordingCause cause) {
    uint8_t body[32];
    format::ByteWriter w(body, sizeof body);
    format::encodeRecording(w, {EventClock::now(), change, cause});
    pushRecord(s, format::RecordTag::Recording, w);
}

void Recorder::emitModule(const format::ModuleInfo& m, void* ctx) {
    instance().torch_.noticeModule(m);
    uint8_t body[8 * 1024];
    format::ByteWriter w(body, sizeof body);
    format::encodeModule(w, m);
    pushRecord(static_cast<Session*>(ctx), format::RecordTag::Module, w);
}

void Recorder::recordBlock(format::Event& e) {
    Recorder& self = instance();
    if (!self.active()) {
        return; // after the end of the trace (the interpreter frees tensors at exit)
    }
    const auto action = static_cast<format::BlockAction>(e.api);
    const bool free = action == format::BlockAction::FreeRequested ||
                      action == format::BlockAction::FreeCompleted;
    if (free && self.python_.finalizing()) {
        e.flags |= format::kFlagInterpreterExiting;
    }
    // Two of every tensor's three events: without their stack walks a tensor's events cost
    // a third of what they did (scripts/bench-blocks.sh, docs/performance.md).
    self.record(e, !free);
}

void Recorder::reportCachingAllocator(const format::CachingAllocatorInfo& info) {
    Session* s = instance().session_.load(std::memory_order_acquire);
    uint8_t body[format::kMaxCachingAllocatorConfig + 2048];
    format::ByteWriter w(body, sizeof body);
    format::encodeCachingAllocator(w, info);
    if (s) {
        pushRecord(s, format::RecordTag::CachingAllocator, w);
    }
}

void Recorder::emitPythonCode(const format::PythonCodeInfo& code, void* ctx) {
    // Called under the code table's lock, so one buffer serves every thread, off their stacks.
    static uint8_t body[format::kMaxPythonFilename + format::kMaxPythonName +
                        format::kMaxPythonLineTable + 64];
    format::ByteWriter w(body, sizeof body);
    format::encodePythonCode(w, code);
    pushRecord(static_cast<Session*>(ctx), format::RecordTag::PythonCode, w);
}

// `words`: the native frames, then the Python frames python_stacks.h packs after them.
void Recorder::emitStack(uint32_t id, const uint64_t* words, uint32_t count, void* ctx) {
    Recorder& self = instance();
    self.modules_.refresh(&Recorder::emitModule, ctx);
    uint32_t depth = 0;
    while (depth < count && !python::PythonStacks::isPythonWord(words[depth])) {
        ++depth;
    }
    format::PythonFrame python[format::kMaxPythonDepth];
    uint32_t python_depth = 0;
    for (uint32_t i = depth; i < count && python_depth < format::kMaxPythonDepth; ++i) {
        python[python_depth++] = python::PythonStacks::unpack(words[i]);
    }
    uint8_t body[format::kMaxStackDepth * 10 + format::kMaxPythonDepth * 15 + 32];
    format::ByteWriter w(body, sizeof body);
    format::encodeStack(w, id, words, depth, python, python_depth);
    pushRecord(static_cast<Session*>(ctx), format::RecordTag::Stack, w);
}

inline void Recorder::stamp(format::Event& e, Session* s, bool with_stack) {
    e.tid = currentTid();
    if (with_stack && (config_.stack_depth > 0 || python_.active())) {
        uint64_t words[format::kMaxStackDepth + format::kMaxPythonDepth];
        // Allocations and frees come from different call sites: each kind's previous stack
        // is kept apart, and when it is found again unchanged, so is its id.
        const uint32_t site = static_cast<uint32_t>(e.op) % kCaptureSites;
        // The Python frames first: where they differ, so (almost always) does the native
        // stack, and they tell the unwinder which of the site's stacks to start from.
        python::WalkedFrames python;
        python_.read(python);
        StackTable::Origin origin;
        origin.site = site;
        const uint32_t native =
            config_.stack_depth > 0
                ? captureStack(words, config_.stack_depth, site, python.hint, &origin.way)
                : 0;
        origin.native = native;
        const uint32_t depth = python_.place(python, words, native, &Recorder::emitPythonCode, s);
        e.stack_id = stacks_.intern(words, depth, &Recorder::emitStack, s, origin);
    }
    e.time_ns = EventClock::now();
}

void Recorder::record(format::Event& e, bool with_stack) {
    Session* s = session();
    if (!s || !recording(s)) {
        return;
    }
    stamp(e, s, with_stack);
    uint64_t pos = s->ring.claim(1);
    if (pos != RingBuffer::kNoPosition) {
        t_open = {pos, pos + 1};
        publishEvent(s, pos, e);
    }
}

Recorder::Pending Recorder::reserve(format::Event& e) {
    Session* s = session();
    if (!s || !recording(s)) {
        return {};
    }
    stamp(e, s, true);
    uint64_t pos = s->ring.claim(1);
    if (pos == RingBuffer::kNoPosition) {
        return {};
    }
    t_open = {pos, pos + 1};
    return {s, pos};
}

void Recorder::commit(const Pending& pending, const format::Event& e) {
    if (pending.session) {
        publishEvent(pending.session, pending.pos, e);
    }
}

void Recorder::markPhase(const char* name, format::PhaseKind kind) {
    Session* s = active() ? session() : nullptr;
    if (!s || (!name && kind != format::PhaseKind::Pop)) {
        return;
    }
    uint8_t body[format::kMaxPhaseName + 64]; // the name and four varints
    format::ByteWriter w(body, sizeof body);
    // Encoded from the caller's text: nothing is allocated on the program's thread (out of
    // host memory, an allocation here would end the program: out_of_memory.h).
    const uint32_t tid = currentTid();
    format::encodePhase(w, EventClock::now(),
                        name ? std::string_view(name, strnlen(name, format::kMaxPhaseName))
                             : std::string_view(),
                        kind, tid);
    // The drop count before a push's claim and after a pop's: every drop that may fall
    // between them is counted (phase_window.h).
    const uint64_t dropped_before = s->ring.dropped();
    const OpenPositions at = pushRecord(s, format::RecordTag::Phase, w);
    const bool recorded = at.first != RingBuffer::kNoPosition;
    const uint64_t dropped_after = s->ring.dropped();
    if (kind == format::PhaseKind::Push) {
        phase_window::pushed(recorded, at.end, dropped_before);
    } else if (kind == format::PhaseKind::Pop) {
        phase_window::popped(recorded, at.first, dropped_after);
    }
    phase_accounting::claimed(kind, tid, recorded, at.first, dropped_before, dropped_after);
}

bool Recorder::accountPhases() {
    if (!active()) {
        return false;
    }
    phase_accounting::accountThread(currentTid());
    return true;
}

bool Recorder::lastPhaseAccount(PhaseAccount& out) {
    Session* s = active() ? session_.load(std::memory_order_acquire) : nullptr;
    uint64_t pop = 0, dropped = 0;
    if (!s || s->aggregator || !phase_accounting::lastPop(pop, dropped)) {
        return false;
    }
    // The writer has the figures once it drained the pop: at once, unless a record before
    // it is still being written by another thread (a free waiting for its call to return).
    constexpr int kAttempts = 1000;
    for (int i = 0; i < kAttempts && !s->writer.failed(); ++i) {
        s->writer.drain();
        if (s->accounting.take(pop, out)) {
            if (dropped > 0) {
                out.unsettled |= account_flags::kDropped;
            }
            return true;
        }
        sched_yield();
    }
    return false;
}

bool Recorder::lastPoppedPhase(PoppedPhase& out) {
    return active() && session_.load(std::memory_order_acquire) && phase_window::lastPopped(out);
}

const char* Recorder::tracePath() {
    Session* s = active() ? session() : nullptr;
    return s ? s->file.path().c_str() : nullptr;
}

bool Recorder::flush() {
    Session* s = session_.load(std::memory_order_acquire);
    if (!s) {
        return false;
    }
    s->writer.drain();
    return true;
}

void Recorder::finalize(int signal, bool from_signal) {
    Session* s = session_.load(std::memory_order_acquire);
    // A vfork child shares our memory but is not us: it must not end our trace.
    if (!s || s->pid != getpid()) {
        return;
    }
    if (from_signal) {
        // No lock in a signal handler: the flag alone decides who ends the trace.
        if (!finalized_.exchange(true)) {
            s->writer.account(nullptr); // no allocation in a signal handler
            endTrace(s, signal, true, false);
        }
        return;
    }
    std::lock_guard lock(end_mutex_);
    if (!finalized_.exchange(true)) {
        endTrace(s, signal, false, false);
    }
}

void Recorder::endTrace(Session* s, int signal, bool from_signal, bool provisional) {
    // From here on every claim fails: the positions below `end` are the whole trace.
    const uint64_t end = s->ring.seal(provisional);
    if (!from_signal) {
        s->thread.stop();
    }
    format::TrailerInfo t;
    t.end_mono_ns = EventClock::now();
    t.end_wall_ns = nowNs(CLOCK_REALTIME);
    t.exit_signal = signal;
    t.python_status = python_.status();
    const OpenPositions own = t_open;
    s->writer.finish(t, end, own.first, own.end, from_signal);
    uint64_t dropped = s->ring.dropped();
    if (dropped > 0 && !from_signal && !provisional) {
        logger().warn("{} events were dropped; the trace says so", dropped);
    }
}

void Recorder::beforeExec() {
    Session* s = session_.load(std::memory_order_acquire);
    if (!s || s->pid != getpid()) {
        return;
    }
    std::lock_guard lock(end_mutex_);
    if (finalized_.load() || exec_pending_) {
        return;
    }
    exec_pending_ = true;
    endTrace(s, 0, false, true);
}

void Recorder::afterFailedExec() {
    // A vfork child (sharing our memory, not our trace) returns here too: it must not touch
    // our locks.
    Session* s = session_.load(std::memory_order_acquire);
    if (!s || s->pid != getpid()) {
        return;
    }
    std::lock_guard lock(end_mutex_);
    if (!exec_pending_) {
        return;
    }
    exec_pending_ = false;
    if (finalized_.load() || s->writer.failed()) {
        return;
    }
    // The positions claimed while sealed were never handed out (those calls counted as
    // dropped); the log goes on after them, and after the first trailer.
    s->writer.reopen(s->ring.unseal());
    if (!s->thread.start(s->writer, s->ring)) {
        logger().warn("cannot restart the writer thread; draining inline");
    }
}

void Recorder::drainFromSignal() {
    Session* s = session_.load(std::memory_order_acquire);
    if (s && s->pid == getpid()) {
        s->writer.account(nullptr); // no allocation in a signal handler
        s->writer.tryDrain();
    }
}

void Recorder::beforeFork() {
    end_mutex_.lock();
    create_mutex_.lock();
    python_.mutex().lock();
    stacks_.mutex().lock();
}

void Recorder::afterForkParent() {
    stacks_.mutex().unlock();
    python_.mutex().unlock();
    create_mutex_.unlock();
    end_mutex_.unlock();
}

void Recorder::afterForkChild() {
    t_tid = 0;
    t_open = {};
    phase_window::reset();
    phase_accounting::resetThread();
    EventClock::afterForkChild();
    contextsMayHaveEnded();
    if (Session* old = session_.exchange(nullptr)) {
        // The parent's writer thread did not come along, and its file is not ours. The
        // object is left allocated: freeing what another thread may have been using at
        // the moment of fork is not safe.
        old->thread.forget();
        old->file.close();
    }
    stacks_.reset();
    modules_.reset();
    python_.resetCodes();
    finalized_.store(false);
    creation_failed_.store(false);
    pause_recorded_.store(false);
    exec_pending_ = false;
    stacks_.mutex().unlock();
    python_.mutex().unlock();
    create_mutex_.unlock();
    end_mutex_.unlock();
}

namespace {
__attribute__((constructor)) void onLoad() {
    Recorder::instance();
}
__attribute__((destructor)) void onUnload() {
    Recorder::instance().finalize(0, false);
}
} // namespace

} // namespace gmt::preload
