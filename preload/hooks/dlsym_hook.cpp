// Route 3 of docs/architecture.md: programs (JAX/XLA, cudart's loader) that look driver or runtime
// functions up by name through a library handle get the tracer's wrapper instead.
//
// RTLD_NEXT and RTLD_DEFAULT look-ups depend on who the caller is, which glibc reads from
// the return address. Those are passed on as a tail call (this file is always compiled
// with sibling-call optimisation, see CMakeLists.txt), so glibc sees the program's own
// return address. They need no substitution anyway: a wrapped name found that way
// already resolves to the tracer's exported wrapper, which comes first in the search order.
#include "../real_functions.h"

#include <dlfcn.h>

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
    if (handle != RTLD_NEXT && handle != RTLD_DEFAULT && gmt::preload::isWrappedName(name)) {
        return gmt::preload::substituteNamedPointer(name, gmt::preload::realDlsym(handle, name));
    }
    gmt::preload::DlsymFn real = gmt::preload::realDlsymFunction();
    return real ? real(handle, name) : nullptr;
}
