#include "writer_thread.h"

#include "log_writer.h"

#include <chrono>
#include <csignal>

namespace gmt::preload {

bool WriterThread::start(LogWriter& writer) {
    writer_ = &writer;
    stop_ = false;
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
    {
        std::lock_guard lock(mutex_);
        pending_ = true;
    }
    cv_.notify_one();
}

void WriterThread::stop() {
    if (!running_) {
        return;
    }
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_one();
    pthread_join(thread_, nullptr);
    running_ = false;
}

void* WriterThread::main(void* arg) {
    auto* self = static_cast<WriterThread*>(arg);
    for (;;) {
        self->writer_->drain();
        std::unique_lock lock(self->mutex_);
        self->cv_.wait_for(lock, std::chrono::milliseconds(10),
                           [&] { return self->stop_ || self->pending_; });
        self->pending_ = false;
        if (self->stop_) {
            break;
        }
    }
    return nullptr;
}

} // namespace gmt::preload
