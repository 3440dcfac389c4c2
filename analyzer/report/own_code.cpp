#include "report/own_code.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

std::string_view basename(std::string_view path) {
    const size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view dirname(std::string_view path) {
    const size_t slash = path.rfind('/');
    return slash == std::string_view::npos || slash == 0 ? std::string_view()
                                                         : path.substr(0, slash);
}

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

// A root compared as a directory: "/src/app" covers "/src/app/x.py", not "/src/apple.py".
std::string asDirectory(std::string root) {
    while (root.size() > 1 && root.back() == '/') {
        root.pop_back();
    }
    if (root != "/") {
        root += '/';
    }
    return root;
}

// python3.12, python, pypy3: the frames of such a program's executable are the
// interpreter's.
bool interpreter(std::string_view executable) {
    const std::string_view name = basename(executable);
    return startsWith(name, "python") || startsWith(name, "pypy");
}

// The standard library, an installed package or frozen bootstrap code.
bool libraryPython(std::string_view file) {
    return startsWith(file, "<frozen") || contains(file, "/site-packages/") ||
           contains(file, "/dist-packages/") || contains(file, "/lib/python3") ||
           contains(file, "/lib64/python3");
}

} // namespace

bool runtimeFrame(const Frame& f) {
    if (f.language != FrameLanguage::Native) {
        return false;
    }
    const std::string_view module = basename(f.module);
    const std::string_view file = basename(f.file);
    return startsWith(module, "libgpumemtrace") || startsWith(module, "libcuda.so") ||
           startsWith(module, "libcudart") || file == "cuda_runtime.h" ||
           file == "cuda_runtime_api.h" || startsWith(f.function, "__libc_start_") ||
           f.function == "_start";
}

OwnCode::OwnCode(const UserCodeOptions& options, std::string_view executable)
    : explicit_roots_(std::any_of(options.roots.begin(), options.roots.end(),
                                  [](const std::string& r) { return !r.empty(); })) {
    std::vector<std::string> roots = options.roots;
    if (!explicit_roots_ && !interpreter(executable) && !dirname(executable).empty()) {
        roots.emplace_back(dirname(executable));
    }
    roots.insert(roots.end(), options.extra_roots.begin(), options.extra_roots.end());
    for (std::string& r : roots) {
        if (!r.empty()) {
            roots_.push_back(asDirectory(std::move(r)));
        }
    }
}

bool OwnCode::underRoot(std::string_view path) const {
    return !path.empty() && std::any_of(roots_.begin(), roots_.end(),
                                        [&](const std::string& r) { return startsWith(path, r); });
}

bool OwnCode::own(const Frame& f) const {
    if (f.language == FrameLanguage::Python) {
        // A relative file (rare: code compiled from a relative path) cannot be placed
        // under a root; it is not a library's either.
        const bool relative = !startsWith(f.file, "/") && !startsWith(f.file, "<");
        return explicit_roots_ ? underRoot(f.file) || relative : !libraryPython(f.file);
    }
    if (runtimeFrame(f)) {
        return false;
    }
    return underRoot(f.module) || (startsWith(f.file, "/") && underRoot(f.file));
}

} // namespace gmt::analyzer
