#include "check/github_annotations.h"

#include "base/text_safety.h"

namespace gmt::cli {

std::string githubEscape(std::string_view raw, bool property) {
    // GitHub's own escapes first; every other control character (an escape sequence from
    // a trace's command line or paths would reach the terminal of whoever reads the raw
    // log) and invalid UTF-8 then made visible by printable(), run by run.
    std::string out;
    std::string_view::size_type run = 0;
    auto flush = [&](std::string_view::size_type end) {
        out += analyzer::printable(raw.substr(run, end - run));
    };
    for (std::string_view::size_type i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        const char* escaped = c == '%'               ? "%25"
                              : c == '\r'            ? "%0D"
                              : c == '\n'            ? "%0A"
                              : property && c == ':' ? "%3A"
                              : property && c == ',' ? "%2C"
                                                     : nullptr;
        if (escaped) {
            flush(i);
            out += escaped;
            run = i + 1;
        }
    }
    flush(raw.size());
    return out;
}

namespace {

std::string titleOf(const std::string& rule) {
    if (rule == "leak") {
        return "GPU memory leak";
    }
    if (rule == "growth") {
        return "GPU memory grows every iteration";
    }
    if (rule == "peak") {
        return "GPU memory peak over the limit";
    }
    return "GPU memory API misuse: " + rule;
}

std::string annotation(const char* level, const std::optional<SourceLocation>& where,
                       const std::string& title, const std::string& message) {
    std::string line = std::string("::") + level;
    std::string properties;
    if (where) {
        properties = "file=" + githubEscape(where->file, true) +
                     ",line=" + std::to_string(where->line) + ",";
    }
    line += " " + properties + "title=" + githubEscape("gpumemtrace: " + title, true);
    return line + "::" + githubEscape(message, false) + "\n";
}

} // namespace

std::string githubAnnotations(const std::vector<ProcessVerdict>& verdicts, const SourceRoot& root) {
    std::string out;
    for (const ProcessVerdict& v : verdicts) {
        const std::string who = " (" + stableName(v) + ")";
        for (const CheckOutcome& c : v.checks) {
            // Found but not limited (growth without --max-growth): a warning.
            const char* level = c.failed ? "error" : "warning";
            if (!c.failed && (c.name != "growth" || c.findings.empty())) {
                continue;
            }
            if (c.findings.empty()) {
                out += annotation(level, std::nullopt, c.name, c.summary + who);
                continue;
            }
            for (const Finding& f : c.findings) {
                const auto where = locate(*f.stack, root);
                std::string message = f.message;
                if (where && !where->function.empty()) {
                    message += " in " + where->function;
                }
                out += annotation(level, where, titleOf(f.rule), message + who);
            }
        }
    }
    return out;
}

} // namespace gmt::cli
