#include "recorder.h"

#include "clock.h"
#include "log_writer.h"
#include "logging.h"
#include "output_path.h"
#include "process_info.h"
#include "rank_info.h"
#include "ring_buffer.h"
#include "signal_handlers.h"
#include "stack_capture.h"
#include "trace_file.h"
#include "writer_thread.h"

#include <bit>
#include <cstring>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gmt::preload {

struct Session {
    TraceFile file;
    RingBuffer ring;
    LogWriter writer{file, ring};
    WriterThread thread;
    pid_t pid = 0;
};

namespace {

thread_local uint32_t t_tid __attribute__((tls_model("initial-exec"))) = 0;

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

// Pushes one encoded record (tag, length, body) into consecutive slots.
void pushRecord(Session* s, format::RecordTag tag, const uint8_t* body, size_t size) {
    uint8_t buf[16 * 1024];
    format::ByteWriter w(buf, sizeof buf);
    format::appendRecord(w, tag, body, size);
    if (!w.ok()) {
        logger().warn("record of {} bytes too large for the trace; skipped", size);
        return;
    }
    auto length = static_cast<uint32_t>(w.size());
    uint32_t parts = (length + format::kSlotPayload - 1) / format::kSlotPayload;
    uint64_t pos = s->ring.claim(parts);
    if (pos == RingBuffer::kDropped) {
        return;
    }
    for (uint32_t i = 0; i < parts; ++i) {
        format::Slot& slot = s->ring.at(pos + i);
        slot.type = i == 0 ? format::SlotType::Blob : format::SlotType::BlobCont;
        slot.length = i == 0 ? length : 0;
        uint32_t off = i * format::kSlotPayload;
        std::memcpy(slot.payload, buf + off, std::min(format::kSlotPayload, length - off));
    }
    for (uint32_t i = 0; i < parts; ++i) {
        s->ring.commit(pos + i);
    }
}

// A producer wants the ring drained: wake the writer, or drain here when there is none
// (it failed to start).
void wakeWriter(Session* s) {
    if (s->thread.running()) {
        s->thread.wake();
    } else {
        s->writer.tryDrain();
    }
}

void wakeWriterHook(void* ctx) {
    wakeWriter(static_cast<Session*>(ctx));
}

void pushEvent(Session* s, uint64_t pos, const format::Event& e) {
    format::Slot& slot = s->ring.at(pos);
    slot.type = format::SlotType::Event;
    slot.length = 0;
    std::memcpy(slot.payload, &e, sizeof e);
    s->ring.commit(pos);
    if (s->ring.pressing(pos)) {
        wakeWriter(s);
    }
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

Recorder& Recorder::instance() {
    static Recorder recorder;
    return recorder;
}

Recorder::Recorder() : config_(readConfig()) {
    initStackCapture();
    pthread_atfork(forkPrepare, forkParent, forkChild);
    if (!config_.enabled) {
        logger().info("GPUMEMTRACE_ENABLE=0: not tracing");
    }
}

Session* Recorder::session() {
    Session* s = session_.load(std::memory_order_acquire);
    if (s || creation_failed_.load(std::memory_order_relaxed)) {
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
    if (!createParentDirectories(path) ||
        !s->file.create(path, ringSlotsFor(config_.buffer_bytes))) {
        delete s;
        return nullptr;
    }
    s->ring.attach(s->file.slots(), s->file.ringSlots(), &s->file.prologue().dropped_events,
                   config_.on_full == OnFull::Drop, &wakeWriterHook, s);

    // Header and devices go straight to the log: every later record refers to them.
    static uint8_t records[32 * 1024];
    static uint8_t body[8 * 1024];
    format::ByteWriter out(records, sizeof records);
    uint32_t count = 0;
    {
        format::ByteWriter w(body, sizeof body);
        format::encodeHeader(w, collectHeader(config_.stack_depth));
        format::appendRecord(out, format::RecordTag::Header, body, w.size());
        ++count;
    }
    for (const format::DeviceInfo& d : collectDevices()) {
        format::ByteWriter w(body, sizeof body);
        format::encodeDevice(w, d);
        format::appendRecord(out, format::RecordTag::Device, body, w.size());
        ++count;
    }
    s->writer.writeDirect(records, out.size(), count);
    if (!s->thread.start(s->writer)) {
        logger().warn("cannot start the writer thread; draining inline");
    }
    installSignalHandlers();
    logger().info("tracing to {}", s->file.path());
    return s;
}

void Recorder::emitModule(const format::ModuleInfo& m, void* ctx) {
    uint8_t body[8 * 1024];
    format::ByteWriter w(body, sizeof body);
    format::encodeModule(w, m);
    if (w.ok()) {
        pushRecord(static_cast<Session*>(ctx), format::RecordTag::Module, body, w.size());
    }
}

void Recorder::emitStack(uint32_t id, const uint64_t* frames, uint32_t depth, void* ctx) {
    Recorder& self = instance();
    self.modules_.refresh(&Recorder::emitModule, ctx);
    uint8_t body[format::kMaxStackDepth * 10 + 16];
    format::ByteWriter w(body, sizeof body);
    format::encodeStack(w, id, frames, depth);
    pushRecord(static_cast<Session*>(ctx), format::RecordTag::Stack, body, w.size());
}

void Recorder::stamp(format::Event& e, Session* s) {
    e.tid = currentTid();
    if (config_.stack_depth > 0) {
        uint64_t frames[format::kMaxStackDepth];
        uint32_t depth = captureStack(frames, config_.stack_depth);
        e.stack_id = stacks_.intern(frames, depth, &Recorder::emitStack, s);
    }
    e.time_ns = nowNs();
}

void Recorder::record(format::Event& e) {
    Session* s = session();
    if (!s) {
        return;
    }
    stamp(e, s);
    uint64_t pos = s->ring.claim(1);
    if (pos != RingBuffer::kDropped) {
        pushEvent(s, pos, e);
    }
}

Recorder::Pending Recorder::reserve(format::Event& e) {
    Session* s = session();
    if (!s) {
        return {};
    }
    stamp(e, s);
    uint64_t pos = s->ring.claim(1);
    if (pos == RingBuffer::kDropped) {
        return {};
    }
    return {s, pos};
}

void Recorder::commit(const Pending& pending, const format::Event& e) {
    if (pending.session) {
        pushEvent(pending.session, pending.pos, e);
    }
}

void Recorder::markPhase(const char* name) {
    Session* s = active() ? session() : nullptr;
    if (!s || !name) {
        return;
    }
    uint8_t body[4200];
    format::ByteWriter w(body, sizeof body);
    format::encodePhase(w, {nowNs(), std::string(name).substr(0, 4096)});
    pushRecord(s, format::RecordTag::Phase, body, w.size());
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
    if (!s || s->pid != getpid() || finalized_.exchange(true)) {
        return;
    }
    if (!from_signal) {
        s->thread.stop();
    }
    format::TrailerInfo t;
    t.dropped_events = std::atomic_ref<uint64_t>(s->file.prologue().dropped_events).load();
    t.end_mono_ns = nowNs();
    t.end_wall_ns = nowNs(CLOCK_REALTIME);
    t.exit_signal = signal;
    s->writer.finish(t, from_signal);
    if (t.dropped_events > 0 && !from_signal) {
        logger().warn("{} events were dropped (GPUMEMTRACE_ON_FULL=drop); the trace says so",
                      t.dropped_events);
    }
}

void Recorder::drainFromSignal() {
    Session* s = session_.load(std::memory_order_acquire);
    if (s && s->pid == getpid()) {
        s->writer.tryDrain();
    }
}

void Recorder::beforeFork() {
    create_mutex_.lock();
    stacks_.mutex().lock();
}

void Recorder::afterForkParent() {
    stacks_.mutex().unlock();
    create_mutex_.unlock();
}

void Recorder::afterForkChild() {
    t_tid = 0;
    if (Session* old = session_.exchange(nullptr)) {
        // The parent's writer thread did not come along, and its file is not ours. The
        // object is left allocated: freeing what another thread may have been using at
        // the moment of fork is not safe.
        old->thread.forget();
        old->file.close();
    }
    stacks_.reset();
    modules_.reset();
    finalized_.store(false);
    creation_failed_.store(false);
    stacks_.mutex().unlock();
    create_mutex_.unlock();
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
