// The background drain: wakes every few milliseconds, or at once when a producer finds the
// ring half full, and moves committed slots into the log. Events are already durable in
// the ring, so latency here only bounds how much a crash leaves to recovery.
#pragma once

#include <condition_variable>
#include <mutex>
#include <pthread.h>

namespace gmt::preload {

class LogWriter;

class WriterThread {
  public:
    bool start(LogWriter& writer);
    void wake();
    void stop();
    bool running() const { return running_; }
    // In a forked child the thread does not exist; forget it without joining.
    void forget() { running_ = false; }

  private:
    static void* main(void* self);

    LogWriter* writer_ = nullptr;
    pthread_t thread_{};
    bool running_ = false;
    bool stop_ = false;
    bool pending_ = false;
    std::mutex mutex_;
    std::condition_variable cv_;
};

} // namespace gmt::preload
