#include "writer_thread.h"

#include "event_clock.h"
#include "log_writer.h"
#include "ring_buffer.h"

#include <csignal>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gmt::preload {
namespace {

// Without a wake-up from a producer, how long committed events wait for the log.
constexpr long kPeriodNs = 10'000'000;

void futexWait(std::atomic<uint32_t>& word, uint32_t expected, long timeout_ns) {
    timespec ts{0, timeout_ns};
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &ts,
            nullptr, 0);
}

void futexWakeOne(std::atomic<uint32_t>& word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
            0);
}

} // namespace

bool WriterThread::start(LogWriter& writer, const RingBuffer& ring) {
    writer_ = &writer;
    ring_ = &ring;
    stop_.store(false);
    state_.store(kAwake);
    // The application's signals must never be delivered to our thread.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    running_ = pthread_create(&thread_, nullptr, &WriterThread::main, this) == 0;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (running_) {
        pthread_setname_np(thread_, "gpumemtrace");
    }
    return running_;
}

void WriterThread::wake() {
    if (state_.exchange(kAwake, std::memory_order_seq_cst) == kAsleep) {
        futexWakeOne(state_);
    }
}

void WriterThread::stop() {
    if (!running_) {
        return;
    }
    stop_.store(true);
    wake();
    pthread_join(thread_, nullptr);
    running_ = false;
}

void* WriterThread::main(void* arg) {
    auto* self = static_cast<WriterThread*>(arg);
    for (;;) {
        self->writer_->drain();
        EventClock::calibrate();
        if (self->stop_.load()) {
            break;
        }
        // Asleep first, then look: a producer that filled the ring meanwhile either sees
        // kAsleep (and wakes us) or made the backlog visible to this check.
        self->state_.store(kAsleep, std::memory_order_seq_cst);
        if (self->stop_.load() || self->ring_->wantsDrain()) {
            self->state_.store(kAwake, std::memory_order_relaxed);
            continue;
        }
        futexWait(self->state_, kAsleep, kPeriodNs);
        self->state_.store(kAwake, std::memory_order_relaxed);
    }
    return nullptr;
}

} // namespace gmt::preload
