#include "styled_text.h"

#include "text_safety.h"

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

void StyledText::line(std::vector<Segment> segments) {
    size_t total = 0;
    for (Segment& s : segments) {
        s.text = printable(s.text);
        total += columns(s.text);
    }
    if (style_.width > 0 && total > style_.width) {
        // The shrinkable segment gives up what it can (keeping a few characters), then
        // the line is cut at the width.
        for (Segment& s : segments) {
            const size_t cols = columns(s.text);
            if (s.shrink && cols > 8) {
                const size_t give = std::min(total - style_.width, cols - 8);
                s.text = fitColumns(s.text, cols - give);
                total -= give;
            }
        }
        size_t budget = style_.width;
        for (Segment& s : segments) {
            const size_t cols = columns(s.text);
            if (cols > budget) {
                s.text = fitColumns(s.text, budget);
            }
            budget -= columns(s.text);
        }
    }
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

void StyledText::stack(const Stack& stack, const std::string& indent) {
    for (const FrameText& f : stackText(stack, style_.stacks)) {
        line({{indent, Tone::Plain}, {f.what, Tone::Plain, true}, {f.where, Tone::Dim}});
    }
}

} // namespace gmt::analyzer
