// Where `gpumemtrace record` finds libgpumemtrace.so: next to its own executable, in
// `<bin>/../<libdir>/`, which is the layout of both the build tree and an install prefix,
// so a relocated install keeps working without configuration.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gmt::cli {

// The directories searched, most likely first (for the "not found" message too).
std::vector<std::string> preloadCandidates();

// The first existing library, or nullopt.
std::optional<std::string> locatePreloadLibrary();

// Why `library` cannot go into LD_PRELOAD, or nullopt. ld.so splits LD_PRELOAD at spaces
// and colons and has no quoting: such a path would be cut in pieces, tracing silently
// off, and a relative piece ("dir/lib/libgpumemtrace.so" from "/opt/my dir/lib/...")
// loaded from whatever directory the program runs in. A relative path is refused too,
// for that last reason (callers make --library absolute first).
std::optional<std::string> preloadPathProblem(const std::string& library);

// `existing` LD_PRELOAD with `library` appended (unless it is already there). Appended,
// not prepended: sanitizer runtimes (ASan) insist on coming first, and the tracer's
// interposition does not depend on being first among preloads.
std::string withPreload(const std::string& existing, const std::string& library);

} // namespace gmt::cli
