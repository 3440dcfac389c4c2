// Bounds how many files the analyzer holds open at once. A report over thousands of
// traces (one per process) reads them side by side, a little of each at a time; holding
// a descriptor per trace for the whole run would hit the process's limit. A file not
// being read lends its descriptor back when the pool is full, and is reopened (by its
// owner, who checks it is still the same file) when its turn comes again.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>

namespace gmt::analyzer {

class DescriptorPool {
  public:
    // What the pool knows of one file. Owned by the file's reader; unregister it (forget)
    // before destroying it.
    struct Member {
        int fd = -1;
        int busy = 0; // reads in progress: never closed meanwhile
        bool listed = false;
        std::list<Member*>::iterator position; // in the pool's LRU list, while listed
    };

    explicit DescriptorPool(size_t capacity);
    ~DescriptorPool();

    // The pool every trace file uses: a quarter of the process's descriptor limit, at
    // least 16 and at most 256.
    static DescriptorPool& shared();

    size_t capacity() const { return capacity_; }
    size_t open() const;

    // The member's descriptor, pinned until release(): opened with `reopen` (which
    // returns a descriptor or throws) when the pool had closed it. Making room closes
    // the least recently used descriptor that is not being read.
    int acquire(Member& m, const std::function<int()>& reopen);
    void release(Member& m);
    // Adopts a descriptor just opened by the member's owner (making room first).
    void adopt(Member& m, int fd);
    // Closes the member's descriptor (if open) and drops it from the pool.
    void forget(Member& m);

  private:
    void makeRoomLocked();
    void closeLocked(Member& m);

    size_t capacity_;
    mutable std::mutex mutex_;
    std::list<Member*> lru_; // open members, most recently used first
};

} // namespace gmt::analyzer
