// Passing a file descriptor to another process over a Unix socket (SCM_RIGHTS), the way
// NCCL hands a cuMem export to the rank that imports it. Header-only: the simulator's own
// tests use it without the test support library.
#pragma once

#include <cstring>
#include <sys/socket.h>
#include <sys/uio.h>

namespace gmt::test {

namespace detail {
// One byte of data carrying room for one descriptor.
struct FdMessage {
    char byte = 'f';
    iovec iov{};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};

    FdMessage() {
        iov = {&byte, 1};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    FdMessage(const FdMessage&) = delete; // msg points into itself
    FdMessage& operator=(const FdMessage&) = delete;
};
} // namespace detail

// True when `fd` was sent.
inline bool sendFd(int socket, int fd) {
    detail::FdMessage m;
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return sendmsg(socket, &m.msg, 0) == 1;
}

// The descriptor received, or -1.
inline int receiveFd(int socket) {
    detail::FdMessage m;
    if (recvmsg(socket, &m.msg, 0) != 1) {
        return -1;
    }
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
        return -1;
    }
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

} // namespace gmt::test
