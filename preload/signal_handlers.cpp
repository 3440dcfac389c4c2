#include "signal_handlers.h"

#include "recorder.h"

#include <atomic>
#include <csignal>

namespace gmt::preload {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE,  SIGABRT, SIGTRAP,
                            SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU, SIGXFSZ};
constexpr int kCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction g_previous[kCount];
std::atomic<bool> g_installed{false};

int indexOf(int sig) {
    for (int i = 0; i < kCount; ++i) {
        if (kSignals[i] == sig) {
            return i;
        }
    }
    return -1;
}

void onSignal(int sig, siginfo_t* info, void* context) {
    int i = indexOf(sig);
    if (i < 0) {
        return;
    }
    const struct sigaction& prev = g_previous[i];
    if (prev.sa_flags & SA_SIGINFO) {
        Recorder::instance().drainFromSignal();
        prev.sa_sigaction(sig, info, context);
        return;
    }
    if (prev.sa_handler == SIG_IGN) {
        return;
    }
    if (prev.sa_handler != SIG_DFL) {
        Recorder::instance().drainFromSignal();
        prev.sa_handler(sig);
        return;
    }
    // Default action: the process is about to die of this signal.
    Recorder::instance().finalize(sig, true);
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig); // delivered when the handler returns; a fault re-executes and dies too
}

} // namespace

void installSignalHandlers() {
    if (g_installed.exchange(true)) {
        return;
    }
    for (int i = 0; i < kCount; ++i) {
        struct sigaction current = {};
        if (sigaction(kSignals[i], nullptr, &current) != 0) {
            continue;
        }
        // A signal the program ignores stays ignored (e.g. SIGHUP under nohup).
        if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) {
            g_previous[i] = current;
            continue;
        }
        g_previous[i] = current;
        struct sigaction ours = {};
        ours.sa_sigaction = onSignal;
        ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigemptyset(&ours.sa_mask);
        sigaction(kSignals[i], &ours, nullptr);
    }
}

} // namespace gmt::preload
