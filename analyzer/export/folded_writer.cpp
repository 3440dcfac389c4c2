#include "export/folded_writer.h"

#include "base/text_safety.h"
#include "export/json_text.h"
#include "views/frame_text.h"

namespace gmt::analyzer {

namespace {

// ';' separates frames and the last space the value; control characters would end the line.
std::string frameLabel(const Frame& f) {
    std::string label = frameText(f).what;
    if (f.language == FrameLanguage::Python && !f.file.empty()) {
        label += " (" + f.file + ")"; // `forward` is in every module: the file says which
    }
    label = validUtf8(label);
    for (char& c : label) {
        if (c == ';') {
            c = ',';
        } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = ' ';
        }
    }
    return label;
}

} // namespace

FoldedWriter::FoldedWriter(const Analysis& analysis, const std::string& output, FoldedMetric metric,
                           const FrameSource& frames, bool full_stacks)
    : analysis_(analysis), out_(output), metric_(metric), full_stacks_(full_stacks),
      stacks_(analysis, frames) {}

void FoldedWriter::began(const LifetimeInfo& l, const format::Event&) {
    if (metric_ != FoldedMetric::Allocated && metric_ != FoldedMetric::Allocations) {
        return;
    }
    auto& [bytes, count] = allocated_[uint64_t{l.charge.process} << 32 | l.charge.stack];
    bytes += l.charge.bytes;
    ++count;
}

std::string FoldedWriter::processRoot(uint64_t pid) const {
    if (analysis_.processes().size() < 2) {
        return {};
    }
    for (const auto& p : analysis_.processes()) {
        if (p->header && p->header->pid == pid && p->header->rank >= 0) {
            return "rank " + std::to_string(p->header->rank) + " (pid " + std::to_string(pid) + ")";
        }
    }
    return "pid " + std::to_string(pid);
}

std::string FoldedWriter::folded(const Stack& stack, const std::string& root) const {
    std::string line = root;
    const std::vector<const Frame*> frames = userFrames(stack, full_stacks_);
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
        if (!line.empty()) {
            line += ';';
        }
        line += frameLabel(**it);
    }
    if (frames.empty()) {
        line += line.empty() ? "(no stack recorded)" : ";(no stack recorded)";
    }
    return line;
}

void FoldedWriter::finish(const Report* report) {
    auto write = [&](const std::string& folded_stack, uint64_t value) {
        if (value == 0) {
            return;
        }
        out_.write(folded_stack);
        out_.put(' ');
        std::string number;
        appendInt(number, value);
        out_.write(number);
        out_.put('\n');
    };
    switch (metric_) {
    case FoldedMetric::Leaked:
        for (const LeakSite& site : report->leaks) {
            write(folded(site.stack, processRoot(site.pid)), site.bytes);
        }
        break;
    case FoldedMetric::Peak:
        for (const PeakSite& site : report->peak.top_sites) {
            write(folded(site.stack, processRoot(site.pid)), site.bytes);
        }
        break;
    case FoldedMetric::Allocated:
    case FoldedMetric::Allocations:
        for (const auto& [key, totals] : allocated_) {
            const auto process = static_cast<uint32_t>(key >> 32);
            const ProcessData& p = *analysis_.processes()[process];
            const std::string root = processRoot(p.header ? p.header->pid : 0);
            write(folded(stacks_.frames(process, static_cast<uint32_t>(key)), root),
                  metric_ == FoldedMetric::Allocated ? totals.first : totals.second);
        }
        break;
    }
    out_.close();
}

} // namespace gmt::analyzer
