#include "check/source_paths.h"

#include "views/frame_text.h"

#include <cstdlib>
#include <filesystem>

namespace gmt::cli {

SourceRoot::SourceRoot(const std::string& root) {
    std::string dir = root;
    if (dir.empty()) {
        const char* workspace = std::getenv("GITHUB_WORKSPACE");
        dir = workspace && *workspace ? workspace : ".";
    }
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(dir, ec);
    // weakly_canonical resolves what exists (symbolic links, "..") and keeps the rest.
    std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, ec);
    root_ = (ec ? absolute : canonical).lexically_normal().string();
    if (root_.empty() || root_.back() != '/') {
        root_ += '/';
    }
}

std::string SourceRoot::relative(const std::string& path) const {
    if (path.empty()) {
        return path;
    }
    if (path.front() != '/') {
        // Relative to the directory it was compiled in (ccache's base_dir, builds that name
        // sources relatively): "../../src/a.cpp". Without the leading ".." parts it is the
        // path under the root when a file is there.
        std::filesystem::path p = std::filesystem::path(path).lexically_normal();
        auto it = p.begin();
        while (it != p.end() && (*it == ".." || *it == ".")) {
            ++it;
        }
        std::filesystem::path rest;
        for (; it != p.end(); ++it) {
            rest /= *it;
        }
        std::error_code ec;
        return !rest.empty() && std::filesystem::exists(root_ + rest.string(), ec) ? rest.string()
                                                                                   : path;
    }
    const std::string normal = std::filesystem::path(path).lexically_normal().string();
    if (normal.compare(0, root_.size(), root_) == 0 && normal.size() > root_.size()) {
        return normal.substr(root_.size());
    }
    return path;
}

std::optional<SourceLocation> locate(const analyzer::Stack& stack, const SourceRoot& root) {
    const analyzer::Frame* f = analyzer::sourceFrame(stack);
    if (!f) {
        return std::nullopt;
    }
    return SourceLocation{root.relative(f->file), f->line, f->function};
}

} // namespace gmt::cli
