// The background drain: sleeps on a timer (kPeriod), or until a producer finds the ring
// filling up (ring_buffer.h says when), moves committed slots into the log and keeps the
// event clock fitted (event_clock.h). Events are already durable in the ring, so latency
// here only bounds how much a crash leaves to recovery.
//
// The sleep is a futex on one word: a producer's wake is one atomic exchange, plus a
// futex wake only when the thread really sleeps, so it is cheap and async-signal-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <pthread.h>

namespace gmt::preload {

class LogWriter;
class RingBuffer;

class WriterThread {
  public:
    bool start(LogWriter& writer, const RingBuffer& ring);
    void wake();
    void stop();
    bool running() const { return running_; }
    // In a forked child the thread does not exist; forget it without joining.
    void forget() { running_ = false; }

  private:
    static void* main(void* self);

    static constexpr uint32_t kAwake = 0, kAsleep = 1;

    LogWriter* writer_ = nullptr;
    const RingBuffer* ring_ = nullptr;
    pthread_t thread_{};
    bool running_ = false;
    std::atomic<bool> stop_{false};
    std::atomic<uint32_t> state_{kAwake};
};

} // namespace gmt::preload
