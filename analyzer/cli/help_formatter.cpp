#include "cli/help_formatter.h"

#include <algorithm>

namespace gmt::cli {

namespace {

constexpr size_t kDefaultWidth = 80; // no terminal: the width help text is written for
constexpr size_t kNarrowest = 24;    // a description column never narrower than this

} // namespace

std::string wrapWords(const std::string& text, size_t width) {
    std::string out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            end = text.size();
        }
        size_t used = 0;
        size_t word = start;
        while (word < end) {
            size_t next = text.find(' ', word);
            if (next == std::string::npos || next > end) {
                next = end;
            }
            const size_t length = next - word;
            if (length > 0) {
                if (used > 0 && used + 1 + length > width) {
                    out += '\n';
                    used = 0;
                } else if (used > 0) {
                    out += ' ';
                    ++used;
                }
                out.append(text, word, length);
                used += length;
            }
            word = next + 1;
        }
        if (end == text.size()) {
            break;
        }
        out += '\n';
        start = end + 1;
    }
    return out;
}

std::string WrappingFormatter::make_option_desc(const CLI::Option* opt) const {
    const size_t column = get_column_width();
    const size_t width = std::max(kNarrowest, width_ > column ? width_ - column : 0);
    return wrapWords(CLI::Formatter::make_option_desc(opt), width);
}

std::string WrappingFormatter::make_description(const CLI::App* app) const {
    return wrapWords(CLI::Formatter::make_description(app), std::max(kNarrowest, width_));
}

void useWrappingFormatter(CLI::App& app, size_t width) {
    auto formatter = std::make_shared<WrappingFormatter>(width == 0 ? kDefaultWidth : width);
    app.formatter(formatter);
    for (CLI::App* sub : app.get_subcommands({})) {
        sub->formatter(formatter);
    }
}

} // namespace gmt::cli
