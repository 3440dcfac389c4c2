// `export --format folded`: folded stacks, one line per stack, "root;...;leaf VALUE", for
// flamegraph.pl, inferno and speedscope. The metric:
//
//   leaked       bytes leaked (the report's leak sites: never freed, or freed only by a
//                device reset or context destroy)
//   peak         bytes held at the peak (the report's peak sites)
//   allocated    bytes of every successful allocation, freed or not
//   allocations  the number of successful allocations
//
// Leaked and peak come from the report; allocated and allocations are counted per stack
// while the trace streams. Frames show as in the text report (hidden frames left out
// unless full_stacks); with several processes each line starts with its process.
#pragma once

#include "analysis/analysis.h"
#include "base/output_file.h"
#include "export/export_writer.h"
#include "export/stack_cache.h"

#include <map>
#include <string>

namespace gmt::analyzer {

enum class FoldedMetric { Leaked, Peak, Allocated, Allocations };

class FoldedWriter final : public ExportWriter {
  public:
    FoldedWriter(const Analysis& analysis, const std::string& output, FoldedMetric metric,
                 const FrameSource& frames, bool full_stacks);

    void began(const LifetimeInfo& lifetime, const format::Event& e) override;
    bool needsReport() const override {
        return metric_ == FoldedMetric::Leaked || metric_ == FoldedMetric::Peak;
    }
    void finish(const Report* report) override;

  private:
    // Folded text of one stack, root first, with its process's frame when there are several.
    std::string folded(const Stack& stack, const std::string& root) const;
    std::string processRoot(uint64_t pid) const;

    const Analysis& analysis_;
    OutputFile out_;
    FoldedMetric metric_;
    bool full_stacks_;
    StackCache stacks_;
    // (process << 32 | stack) -> (bytes, allocations); grows with distinct stacks only.
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> allocated_;
};

} // namespace gmt::analyzer
