#include "views/html_report.h"

#include "base/text_safety.h"
#include "report/report_json.h"
#include "views/frame_text.h"
#include "views/html_assets.h"

#include <map>
#include <optional>

namespace gmt::analyzer {

namespace {

// Stacks repeat frames (every stack of a program ends in main), so the page lists each
// distinct frame once, with the text the text report gives it and whether text views
// hide it, and stacks become lists of indices into that list. Distinct frames past
// kMaxFrames (deep stacks that share nothing) all become one placeholder, counted, which
// bounds the page: about 250 bytes a frame.
constexpr size_t kMaxFrames = 16384;

class FrameTable {
  public:
    // A stack as the page writes it (toJson's StackJson): indices into the frame list.
    Json stack(const Stack& stack) {
        Json indices = Json::array();
        for (const Frame& f : stack) {
            indices.push_back(index(f));
        }
        return indices;
    }

    Json take() && { return std::move(frames_); }
    uint64_t leftOut() const { return left_out_; }

  private:
    size_t index(const Frame& f) {
        Json frame = frameJson(f);
        // Frames are the same when the report writes them the same.
        std::string key = jsonText(frame);
        auto found = seen_.find(key);
        if (found != seen_.end()) {
            return found->second;
        }
        if (frames_.size() >= kMaxFrames) {
            ++left_out_;
            if (!placeholder_) {
                placeholder_ = frames_.size();
                frames_.push_back(Json{{"address", ""},
                                       {"module", ""},
                                       {"function", ""},
                                       {"file", ""},
                                       {"line", 0},
                                       {"inlined", false},
                                       {"own", false},
                                       {"label", "(frame not embedded)"},
                                       {"where", ""},
                                       {"hidden", false}});
            }
            // Not remembered: past the bound every unseen frame is the placeholder anyway,
            // and a million stacks of frames of their own would grow this table without end.
            return *placeholder_;
        }
        const FrameText text = frameText(f);
        // Made valid UTF-8 as the report's own strings are (frameJson).
        frame["label"] = validUtf8(text.what);
        frame["where"] = validUtf8(text.where);
        frame["hidden"] = hiddenFrame(f);
        // A C++ function's short name, for labels with little room (the timeline's legend),
        // when it is shorter than the whole signature.
        if (f.language == FrameLanguage::Native && !f.function.empty()) {
            if (std::string name = shortFunction(f.function); name.size() < text.what.size()) {
                frame["short"] = validUtf8(name);
            }
        }
        const size_t at = frames_.size();
        frames_.push_back(std::move(frame));
        seen_.emplace(std::move(key), at);
        return at;
    }

    std::map<std::string, size_t> seen_;
    Json frames_ = Json::array();
    std::optional<size_t> placeholder_;
    uint64_t left_out_ = 0; // distinct frames not embedded
};

// JSON inside <script type="application/json">: only "</script" or "<!--" could end or
// confuse the element, and '<' occurs in JSON only inside strings, where \u003c means it.
std::string scriptSafe(std::string_view json) {
    std::string out;
    out.reserve(json.size() + json.size() / 64);
    for (char c : json) {
        if (c == '<') {
            out += "\\u003c";
        } else {
            out += c;
        }
    }
    return out;
}

// {"report": ..., "frames": ..., "frames_left_out": N}, the report written as text as it is
// walked (no tree of it: report_json.h), on to `write` a megabyte at a time and made
// script-safe on the way; the frame table is complete only after.
void writePageData(const Report& report, const std::function<void(std::string_view)>& write) {
    const auto safe = [&write](std::string_view text) { write(scriptSafe(text)); };
    FrameTable frames;
    const StackJson stack = [&frames](const Stack& s) { return frames.stack(s); };
    std::string text = R"({"report":)";
    writeJsonText(report, text, -1, &stack, safe);
    const uint64_t frames_left_out = frames.leftOut();
    text += R"(,"frames":)" + jsonText(std::move(frames).take()) + R"(,"frames_left_out":)" +
            std::to_string(frames_left_out) + "}";
    safe(text);
}

} // namespace

bool htmlReportAvailable() {
    return html_assets::kHaveLibraries;
}

std::string htmlReportUnavailableReason() {
    return "this gpumemtrace was built without the HTML report's browser libraries (uPlot "
           "from npm, fetched by scripts/install.sh and scripts/test.sh into "
           "analyzer/views/html/node_modules); rebuild after fetching them, or use --format json";
}

ReportOptions htmlReportOptions() {
    ReportOptions options;
    options.top = 100;
    options.detail = ReportDetail::forHtml();
    options.what_if = true;
    return options;
}

void writeHtml(const Report& report, const std::function<void(std::string_view)>& write) {
    // page.html holds three markers, in this order; what goes in is never searched.
    const std::string_view page = html_assets::kPage;
    size_t at = 0;
    const auto upTo = [&](std::string_view marker) {
        const size_t found = page.find(marker, at);
        if (found == std::string_view::npos) {
            return false; // a mistake in page.html; the HTML tests catch it
        }
        write(page.substr(at, found - at));
        at = found + marker.size();
        return true;
    };
    if (upTo("/*GMT_STYLE*/")) {
        write(html_assets::kStyle);
    }
    if (upTo("/*GMT_DATA*/")) {
        writePageData(report, write);
    }
    if (upTo("/*GMT_SCRIPT*/")) {
        write(html_assets::kScript);
    }
    write(page.substr(at));
}

std::string renderHtml(const Report& report) {
    std::string out;
    writeHtml(report, [&out](std::string_view piece) { out += piece; });
    return out;
}

} // namespace gmt::analyzer
