#include "read/descriptor_pool.h"

#include <algorithm>
#include <sys/resource.h>
#include <unistd.h>

namespace gmt::analyzer {

DescriptorPool::DescriptorPool(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

DescriptorPool::~DescriptorPool() {
    std::lock_guard lock(mutex_);
    for (Member* m : lru_) {
        ::close(m->fd);
        m->fd = -1;
        m->listed = false;
    }
    lru_.clear();
}

DescriptorPool& DescriptorPool::shared() {
    static DescriptorPool pool([] {
        rlimit limit{};
        size_t allowed = 1024;
        if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
            allowed = static_cast<size_t>(limit.rlim_cur);
        }
        return std::clamp<size_t>(allowed / 4, 16, 256);
    }());
    return pool;
}

size_t DescriptorPool::open() const {
    std::lock_guard lock(mutex_);
    return lru_.size();
}

void DescriptorPool::closeLocked(Member& m) {
    ::close(m.fd);
    m.fd = -1;
    lru_.erase(m.position);
    m.listed = false;
}

void DescriptorPool::makeRoomLocked() {
    // Oldest first; a descriptor being read stays (the pool may then exceed its capacity
    // by the number of concurrent reads, which is bounded by the readers' threads).
    auto it = lru_.end();
    while (lru_.size() >= capacity_ && it != lru_.begin()) {
        --it;
        Member* victim = *it;
        if (victim->busy == 0) {
            it = lru_.erase(it); // the older neighbour, already passed: --it goes on
            ::close(victim->fd);
            victim->fd = -1;
            victim->listed = false;
        }
    }
}

void DescriptorPool::adopt(Member& m, int fd) {
    std::lock_guard lock(mutex_);
    if (m.listed) {
        closeLocked(m);
    }
    makeRoomLocked();
    m.fd = fd;
    lru_.push_front(&m);
    m.position = lru_.begin();
    m.listed = true;
}

int DescriptorPool::acquire(Member& m, const std::function<int()>& reopen) {
    std::unique_lock lock(mutex_);
    if (m.listed) {
        lru_.splice(lru_.begin(), lru_, m.position);
        ++m.busy;
        return m.fd;
    }
    // Reopened outside the lock: it may be slow (a network file system) and may throw.
    lock.unlock();
    int fd = reopen();
    lock.lock();
    if (m.listed) { // another thread reopened it meanwhile
        ::close(fd);
        lru_.splice(lru_.begin(), lru_, m.position);
    } else {
        makeRoomLocked();
        m.fd = fd;
        lru_.push_front(&m);
        m.position = lru_.begin();
        m.listed = true;
    }
    ++m.busy;
    return m.fd;
}

void DescriptorPool::release(Member& m) {
    std::lock_guard lock(mutex_);
    --m.busy;
}

void DescriptorPool::forget(Member& m) {
    std::lock_guard lock(mutex_);
    if (m.listed) {
        closeLocked(m);
    }
}

} // namespace gmt::analyzer
