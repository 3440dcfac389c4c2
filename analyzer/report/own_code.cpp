#include "report/own_code.h"

#include "base/path_name.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

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
    const std::string_view name = fileName(executable);
    return name.starts_with("python") || name.starts_with("pypy");
}

// The standard library, an installed package or frozen bootstrap code.
bool libraryPython(std::string_view file) {
    return file.starts_with("<frozen") || contains(file, "/site-packages/") ||
           contains(file, "/dist-packages/") || contains(file, "/lib/python3") ||
           contains(file, "/lib64/python3");
}

} // namespace

bool runtimeFrame(const Frame& f) {
    if (f.language != FrameLanguage::Native) {
        return false;
    }
    const std::string_view module = fileName(f.module);
    const std::string_view file = fileName(f.file);
    return module.starts_with("libgpumemtrace") || module.starts_with("libcuda.so") ||
           module.starts_with("libcudart") || file == "cuda_runtime.h" ||
           file == "cuda_runtime_api.h" || f.function.starts_with("__libc_start_") ||
           f.function == "_start";
}

OwnCode::OwnCode(const UserCodeOptions& options, std::string_view executable)
    : explicit_roots_(std::any_of(options.roots.begin(), options.roots.end(),
                                  [](const std::string& r) { return !r.empty(); })) {
    std::vector<std::string> roots = options.roots;
    if (!explicit_roots_ && !interpreter(executable) && !parentDirectory(executable).empty()) {
        roots.emplace_back(parentDirectory(executable));
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
                                        [&](const std::string& r) { return path.starts_with(r); });
}

bool OwnCode::own(const Frame& f) const {
    if (f.language == FrameLanguage::Python) {
        // A relative file (rare: code compiled from a relative path) cannot be placed
        // under a root; it is not a library's either.
        const bool relative = !f.file.starts_with("/") && !f.file.starts_with("<");
        return explicit_roots_ ? underRoot(f.file) || relative : !libraryPython(f.file);
    }
    if (runtimeFrame(f)) {
        return false;
    }
    return underRoot(f.module) || (f.file.starts_with("/") && underRoot(f.file));
}

} // namespace gmt::analyzer
