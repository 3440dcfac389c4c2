// glibc resolves dlsym(RTLD_NEXT, name) relative to the caller's object. The tracer's
// dlsym must keep that: from the main program, the next definition of
// gpumemtrace_active is the preload library's own; were the tracer seen as the caller,
// there would be none.
#include <cstdio>
#include <dlfcn.h>

int main() {
    void* next = dlsym(RTLD_NEXT, "gpumemtrace_active");
    void* global = dlsym(RTLD_DEFAULT, "gpumemtrace_active");
    if (!next || next != global) {
        std::fprintf(stderr, "RTLD_NEXT gave %p, RTLD_DEFAULT gave %p\n", next, global);
        return 1;
    }
    return 0;
}
