// Lines of text for a terminal or a pipe, built the same way for both: colour only when
// asked for (a terminal, without NO_COLOR), lines fitted to a width when one is given
// (the terminal's): a shrinkable segment (a frame's function) is shortened first, then
// the line wraps between words. Every segment is made printable (text_safety.h), so no
// view can forget to escape a string that came from a trace.
#pragma once

#include "views/frame_text.h"

#include <string>
#include <vector>

namespace gmt::analyzer {

enum class Tone { Plain, Heading, Strong, Bad, Good, Warn, Dim };

struct TextStyle {
    bool colour = false;
    size_t width = 0; // columns per line; 0: no limit
    StackStyle stacks;
};

struct Segment {
    std::string text;
    Tone tone = Tone::Plain;
    bool shrink = false; // gives way first when the line is too wide
};

class StyledText {
  public:
    explicit StyledText(TextStyle style) : style_(style) {}

    void line(std::vector<Segment> segments);
    void line(std::string text, Tone tone = Tone::Plain) { line({{std::move(text), tone}}); }
    void blank() { out_ += '\n'; }
    // A stack, one frame per line under `indent`.
    void stack(const Stack& stack, const std::string& indent);

    const TextStyle& style() const { return style_; }
    const std::string& str() const { return out_; }

  private:
    static constexpr size_t kMinShrunk = 12; // a shortened segment keeps this many columns
    void emit(const std::vector<Segment>& segments);

    TextStyle style_;
    std::string out_;
};

} // namespace gmt::analyzer
