#include "cli/child_process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <sys/wait.h>
#include <unistd.h>

namespace gmt::cli {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

volatile sig_atomic_t g_child = 0;

void forward(int sig, siginfo_t* info, void*) {
    // The terminal (SI_KERNEL) signals the whole foreground process group, the child
    // included: forwarding those would deliver Ctrl-C twice.
    if (g_child > 0 && (info == nullptr || info->si_code != SI_KERNEL)) {
        ::kill(static_cast<pid_t>(g_child), sig);
    }
}

sigset_t forwardedSet() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kForwarded) {
        sigaddset(&set, sig);
    }
    return set;
}

} // namespace

ChildStatus runChild(const std::vector<std::string>& argv) {
    ChildStatus status;
    std::vector<char*> cargv;
    for (const std::string& a : argv) {
        cargv.push_back(const_cast<char*>(a.c_str()));
    }
    cargv.push_back(nullptr);

    // execvp's errno comes back through a close-on-exec pipe: EOF means it started.
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) {
        status.started = false;
        status.exit_code = 126;
        status.start_error = std::string("pipe: ") + std::strerror(errno);
        return status;
    }

    // Blocked across fork so a signal arriving before g_child is set is not lost.
    sigset_t set = forwardedSet(), old;
    sigprocmask(SIG_BLOCK, &set, &old);
    struct sigaction sa {
    }, previous[std::size(kForwarded)];
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kForwarded); ++i) {
        sigaction(kForwarded[i], &sa, &previous[i]);
    }

    pid_t pid = ::fork();
    if (pid == 0) {
        for (size_t i = 0; i < std::size(kForwarded); ++i) {
            sigaction(kForwarded[i], &previous[i], nullptr);
        }
        sigprocmask(SIG_SETMASK, &old, nullptr);
        ::close(pipefd[0]);
        ::execvp(cargv[0], cargv.data());
        int err = errno;
        ssize_t ignored = ::write(pipefd[1], &err, sizeof err);
        (void)ignored;
        ::_exit(err == ENOENT ? 127 : 126);
    }
    ::close(pipefd[1]);
    if (pid < 0) {
        status.started = false;
        status.exit_code = 126;
        status.start_error = std::string("fork: ") + std::strerror(errno);
    } else {
        g_child = pid;
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);

    if (pid > 0) {
        int err = 0;
        ssize_t n;
        while ((n = ::read(pipefd[0], &err, sizeof err)) < 0 && errno == EINTR) {
        }
        int wstatus = 0;
        while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
        }
        if (n == static_cast<ssize_t>(sizeof err)) {
            status.started = false;
            status.start_error = std::strerror(err);
            status.exit_code = err == ENOENT ? 127 : 126;
        } else if (WIFEXITED(wstatus)) {
            status.exit_code = WEXITSTATUS(wstatus);
        } else if (WIFSIGNALED(wstatus)) {
            status.signal = WTERMSIG(wstatus);
            status.exit_code = 128 + status.signal;
        }
    }
    ::close(pipefd[0]);
    g_child = 0;
    for (size_t i = 0; i < std::size(kForwarded); ++i) {
        sigaction(kForwarded[i], &previous[i], nullptr);
    }
    return status;
}

} // namespace gmt::cli
