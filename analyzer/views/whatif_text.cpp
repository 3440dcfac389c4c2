#include "views/whatif_text.h"

#include "base/human_bytes.h"
#include "base/text_safety.h"

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

namespace gmt::analyzer {

namespace {

std::string pad(const std::string& s, size_t width) {
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

std::string bytes(uint64_t b) {
    return humanBytes(b, 1);
}

void renderRun(const WhatIfRun& run, std::ostringstream& out) {
    out << printable(run.trace) << " (pid " << run.pid << "), device " << run.device << ": "
        << run.allocations << " allocations on " << run.streams
        << (run.streams == 1 ? " stream" : " streams") << " from "
        << (run.source == "pytorch_blocks" ? "PyTorch's block events" : "the cudaMalloc calls")
        << '\n';
    const WhatIfRecorded& rec = run.recorded;
    out << "  recorded: peak reserved " << bytes(rec.peak_reserved_bytes) << ", "
        << rec.segment_allocs << " segments taken, " << rec.segment_frees << " given back";
    if (!rec.setting.empty()) {
        out << ", PYTORCH_CUDA_ALLOC_CONF=" << printable(rec.setting);
    }
    if (rec.replay_matches) {
        out << (*rec.replay_matches ? " (replay of its own settings: identical)"
                                    : " (replay of its own settings: differs)");
    }
    out << "\n\n";
    size_t width = 8;
    for (const WhatIfSetting& s : run.settings) {
        width = std::max(width, printable(s.label).size() + 2);
    }
    out << "  " << pad("setting", width) << pad("reserved", 11) << pad("allocated", 11)
        << pad("unused", 11) << pad("mallocs", 9) << pad("frees", 9) << pad("needs", 11);
    if (!run.settings.empty()) {
        for (const WhatIfCapacity& c : run.settings.front().capacities) {
            out << pad(printable(c.name), std::max<size_t>(c.name.size() + 2, 8));
        }
    }
    out << '\n';
    for (const WhatIfSetting& s : run.settings) {
        out << "  " << pad(printable(s.label) + (s.exact ? "" : "*"), width)
            << pad(bytes(s.peak_reserved_bytes), 11) << pad(bytes(s.peak_allocated_bytes), 11)
            << pad(bytes(s.fragmentation_bytes), 11) << pad(std::to_string(s.cuda_malloc_calls), 9)
            << pad(std::to_string(s.cuda_free_calls), 9)
            << pad(s.min_capacity_bytes ? bytes(*s.min_capacity_bytes) : "-", 11);
        for (const WhatIfCapacity& c : s.capacities) {
            out << pad(c.fits ? "fits" : "OOM", std::max<size_t>(c.name.size() + 2, 8));
        }
        out << '\n';
    }
    out << '\n';
    for (const WhatIfSetting& s : run.settings) {
        for (const WhatIfCapacity& c : s.capacities) {
            if (c.oom) {
                out << "  " << printable(s.label) << " on " << printable(c.name)
                    << ": out of memory at request " << c.oom->request_index << " ("
                    << bytes(c.oom->requested_bytes) << ", stack " << c.oom->stack_id
                    << ") holding " << bytes(c.oom->reserved_bytes) << '\n';
            }
        }
    }
    // Each reason once, with the rows it applies to.
    std::vector<std::pair<std::string, std::string>> reasons; // (why, labels)
    for (const WhatIfSetting& s : run.settings) {
        if (s.exact) {
            continue;
        }
        auto it = std::find_if(reasons.begin(), reasons.end(),
                               [&](const auto& r) { return r.first == s.why; });
        if (it == reasons.end()) {
            reasons.emplace_back(s.why, printable(s.label));
        } else {
            it->second += ", " + printable(s.label);
        }
    }
    for (const auto& [why, labels] : reasons) {
        out << "  * " << labels << ": " << printable(why) << '\n';
    }
    for (const std::string& note : run.notes) {
        out << "  note: " << printable(note) << '\n';
    }
    out << "  reserved: peak bytes taken from CUDA; allocated: peak bytes in blocks; unused: "
           "reserved but not allocated at the reserved peak; needs: the least capacity that "
           "fits (2 MiB steps). Rows without * are exact.\n";
}

} // namespace

std::string renderWhatIf(const WhatIfReport& report) {
    std::ostringstream out;
    for (size_t i = 0; i < report.runs.size(); ++i) {
        if (i > 0) {
            out << '\n';
        }
        renderRun(report.runs[i], out);
    }
    return out.str();
}

} // namespace gmt::analyzer
