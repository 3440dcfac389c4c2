#include "views/styled_text.h"

#include "base/text_safety.h"

namespace gmt::analyzer {

namespace {

const char* sgr(Tone tone) {
    switch (tone) {
    case Tone::Plain:
        return nullptr;
    case Tone::Heading:
    case Tone::Strong:
        return "\033[1m";
    case Tone::Bad:
        return "\033[1;31m";
    case Tone::Good:
        return "\033[32m";
    case Tone::Warn:
        return "\033[33m";
    case Tone::Dim:
        return "\033[2m";
    }
    return nullptr;
}

} // namespace

void StyledText::emit(const std::vector<Segment>& segments) {
    for (const Segment& s : segments) {
        const char* code = style_.colour ? sgr(s.tone) : nullptr;
        if (code && !s.text.empty()) {
            out_ += code;
            out_ += s.text;
            out_ += "\033[0m";
        } else {
            out_ += s.text;
        }
    }
    out_ += '\n';
}

void StyledText::line(std::vector<Segment> segments) {
    size_t total = 0;
    for (Segment& s : segments) {
        s.text = printable(s.text);
        total += columns(s.text);
    }
    if (style_.width == 0 || total <= style_.width) {
        emit(segments);
        return;
    }
    // A long C++ signature gives way first (its file:line stays readable) ...
    for (Segment& s : segments) {
        const size_t cols = columns(s.text);
        if (s.shrink && cols > kMinShrunk && total > style_.width) {
            const size_t give = std::min(total - style_.width, cols - kMinShrunk);
            s.text = fitColumns(s.text, cols - give);
            total -= give;
        }
    }
    if (total <= style_.width) {
        emit(segments);
        return;
    }
    // ... then the line wraps between words, continued under its indent + 4.
    struct Word {
        std::string text; // with the spaces after it
        Tone tone;
    };
    std::vector<Word> words;
    for (const Segment& s : segments) {
        size_t at = 0;
        while (at < s.text.size()) {
            size_t space = s.text.find(' ', at);
            size_t end =
                space == std::string::npos ? s.text.size() : s.text.find_first_not_of(' ', space);
            end = end == std::string::npos ? s.text.size() : end;
            words.push_back({s.text.substr(at, end - at), s.tone});
            at = end;
        }
    }
    const std::string& first = segments.front().text;
    const size_t indent =
        std::min(first.find_first_not_of(' ') == std::string::npos ? first.size()
                                                                   : first.find_first_not_of(' '),
                 style_.width / 2) +
        4;
    std::vector<Segment> current;
    size_t used = 0;
    for (Word& w : words) {
        size_t cols = columns(w.text);
        const size_t trailing =
            cols - columns(std::string_view(w.text).substr(0, w.text.find_last_not_of(' ') + 1));
        if (used > 0 && used + cols - trailing > style_.width) {
            std::string& last = current.back().text;
            last.erase(last.find_last_not_of(' ') + 1);
            emit(current);
            current = {{std::string(indent, ' '), Tone::Plain}};
            used = indent;
            if (w.text.find_first_not_of(' ') == std::string::npos) {
                continue; // no line starts with the spaces between words
            }
        }
        if (used + cols > style_.width && cols - trailing > style_.width - used) {
            w.text = fitColumns(w.text, style_.width - used); // a word wider than a line
            cols = columns(w.text);
        }
        current.push_back({w.text, w.tone});
        used += cols;
    }
    if (!current.empty()) {
        emit(current);
    }
}

void StyledText::stack(const Stack& stack, const std::string& indent) {
    for (const FrameText& f : stackText(stack, style_.stacks)) {
        line({{indent, Tone::Plain}, {f.what, Tone::Plain, true}, {f.where, Tone::Dim}});
    }
}

} // namespace gmt::analyzer
