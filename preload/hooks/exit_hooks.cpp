// _exit skips atexit handlers and library destructors, so the trace would lack its
// trailer: end it here, then exit as asked. (Events are in the ring either way.)
#include "../recorder.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../real_functions.h"

namespace {
using ExitFn = void (*)(int);

[[noreturn]] void exitThrough(const char* name, int status) {
    gmt::preload::Recorder::instance().finalize(0, false);
    auto real = reinterpret_cast<ExitFn>(gmt::preload::realDlsym(RTLD_NEXT, name));
    if (real) {
        real(status);
    }
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}
} // namespace

extern "C" __attribute__((visibility("default"))) void _exit(int status) {
    exitThrough("_exit", status);
}

extern "C" __attribute__((visibility("default"))) void _Exit(int status) {
    exitThrough("_Exit", status);
}
