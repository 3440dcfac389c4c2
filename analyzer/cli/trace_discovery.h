// Which traces a `gpumemtrace record` run produced. The recorder names each file from
// the GPUMEMTRACE_OUTPUT template (docs/configuration.md: %p pid, %h host, %t time) and adds ".N"
// before the extension when the name is taken; the program may fork, so the pids are
// unknown. Files matching the template are listed before and after the run, and the
// ones that are new or changed are the run's.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gmt::cli {

// `tmpl` made absolute against the current directory, so the recorded program writes
// where we look even if it changes directory.
std::string absoluteTemplate(const std::string& tmpl);

// glob(7) patterns for every name the recorder may produce from `tmpl`: as is, and with
// the ".N" clash suffix.
std::vector<std::string> templateGlobs(const std::string& tmpl, const std::string& host);

class TraceDiscovery {
  public:
    // Takes the "before" listing.
    explicit TraceDiscovery(const std::string& absolute_template);

    // Matching files created or modified since construction, sorted by path.
    std::vector<std::string> newTraces() const;

  private:
    struct Stamp {
        unsigned long long inode = 0;
        long long mtime_ns = 0;
        long long size = 0;
        bool operator==(const Stamp&) const = default;
    };
    std::map<std::string, Stamp> list() const;

    std::vector<std::string> globs_;
    std::map<std::string, Stamp> before_;
};

} // namespace gmt::cli
