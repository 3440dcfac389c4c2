// The exec family replaces the process image, and the trace with it: the trace is ended
// first (sealed and drained, with its trailer), so it is complete. When the call fails and
// returns, the process goes on, and so does its trace (Recorder::afterFailedExec). The
// variadic forms collect their arguments and go through the vector forms.
#include "../real_functions.h"
#include "../recorder.h"

#include <alloca.h>
#include <cerrno>
#include <cstdarg>
#include <dlfcn.h>
#include <unistd.h>

using gmt::preload::Recorder;

namespace {

template <typename Fn> Fn realExec(const char* name) {
    return reinterpret_cast<Fn>(gmt::preload::realDlsym(RTLD_NEXT, name));
}

template <typename Call> int aroundExec(Call&& call) {
    Recorder::instance().beforeExec();
    int r = call();
    int saved = errno;
    Recorder::instance().afterFailedExec();
    errno = saved;
    return r;
}

int missing() {
    errno = ENOSYS;
    return -1;
}

using VectorExec = int (*)(const char*, char* const[]);
using VectorEnvExec = int (*)(const char*, char* const[], char* const[]);

// Runs `exec(argv, envp)` with the arguments of an execl-style call, NULL-terminated, on
// this frame's stack (no allocation: a forked child of a threaded program may call these);
// envp is the pointer after the NULL when `env_follows` (execle), else null.
template <typename Exec>
int withListArgs(const char* first, va_list ap, bool env_follows, Exec&& exec) {
    size_t n = 1;
    va_list count;
    va_copy(count, ap);
    if (first) {
        while (va_arg(count, const char*) != nullptr) {
            ++n;
        }
    }
    va_end(count);
    auto** args = static_cast<char**>(alloca((n + 1) * sizeof(char*)));
    args[0] = const_cast<char*>(first);
    for (size_t i = 1; i < n; ++i) {
        args[i] = va_arg(ap, char*);
    }
    args[n] = nullptr;
    char* const* envp = nullptr;
    if (env_follows) {
        if (first) {
            (void)va_arg(ap, char*); // the NULL that ends the arguments
        }
        envp = va_arg(ap, char* const*);
    }
    return exec(args, envp);
}

} // namespace

#define GMT_EXPORT extern "C" __attribute__((visibility("default")))

GMT_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
    static auto fn = realExec<VectorEnvExec>("execve");
    return aroundExec([&] { return fn ? fn(path, argv, envp) : missing(); });
}

GMT_EXPORT int execv(const char* path, char* const argv[]) {
    static auto fn = realExec<VectorExec>("execv");
    return aroundExec([&] { return fn ? fn(path, argv) : missing(); });
}

GMT_EXPORT int execvp(const char* file, char* const argv[]) {
    static auto fn = realExec<VectorExec>("execvp");
    return aroundExec([&] { return fn ? fn(file, argv) : missing(); });
}

GMT_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
    static auto fn = realExec<VectorEnvExec>("execvpe");
    return aroundExec([&] { return fn ? fn(file, argv, envp) : missing(); });
}

GMT_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
    static auto fn = realExec<int (*)(int, char* const[], char* const[])>("fexecve");
    return aroundExec([&] { return fn ? fn(fd, argv, envp) : missing(); });
}

GMT_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                        int flags) {
    static auto fn =
        realExec<int (*)(int, const char*, char* const[], char* const[], int)>("execveat");
    return aroundExec([&] { return fn ? fn(dirfd, path, argv, envp, flags) : missing(); });
}

GMT_EXPORT int execl(const char* path, const char* arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int r =
        withListArgs(arg, ap, false, [&](char** argv, char* const*) { return execv(path, argv); });
    va_end(ap);
    return r;
}

GMT_EXPORT int execlp(const char* file, const char* arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int r =
        withListArgs(arg, ap, false, [&](char** argv, char* const*) { return execvp(file, argv); });
    va_end(ap);
    return r;
}

GMT_EXPORT int execle(const char* path, const char* arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int r = withListArgs(arg, ap, true,
                         [&](char** argv, char* const* envp) { return execve(path, argv, envp); });
    va_end(ap);
    return r;
}
