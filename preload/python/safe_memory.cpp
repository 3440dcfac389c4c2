#include "safe_memory.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

namespace gmt::preload::python {
namespace {

// Where process_vm_readv is refused (a seccomp profile), the kernel still checks the source
// of a write(2): a pipe carries the bytes through, and an unreadable address is EFAULT.
bool readThroughPipe(uintptr_t address, void* out, size_t size) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        return false;
    }
    bool ok = true;
    auto* dst = static_cast<unsigned char*>(out);
    size_t done = 0;
    while (ok && done < size) {
        size_t chunk = size - done < 4096 ? size - done : 4096; // below the pipe's capacity
        ssize_t w = write(fds[1], reinterpret_cast<const void*>(address + done), chunk);
        if (w <= 0) {
            ok = false;
            break;
        }
        ssize_t got = 0;
        while (got < w) {
            ssize_t r = read(fds[0], dst + done + got, static_cast<size_t>(w - got));
            if (r <= 0) {
                ok = false;
                break;
            }
            got += r;
        }
        done += static_cast<size_t>(w);
    }
    close(fds[0]);
    close(fds[1]);
    return ok;
}

} // namespace

bool safeRead(uintptr_t address, void* out, size_t size) {
    if (address == 0 || address + size < address) {
        return false;
    }
    iovec local{out, size};
    iovec remote{reinterpret_cast<void*>(address), size};
    ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (n == static_cast<ssize_t>(size)) {
        return true;
    }
    if (n < 0 && (errno == EPERM || errno == ENOSYS)) {
        return readThroughPipe(address, out, size);
    }
    return false;
}

} // namespace gmt::preload::python
