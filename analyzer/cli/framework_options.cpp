#include "cli/framework_options.h"

#include "check/builtin_suppressions.h"
#include "cli/report_input.h"

#include <algorithm>
#include <map>
#include <vector>

namespace gmt::cli {

using analyzer::CachingAllocatorTable;

std::vector<CLI::Option*> addFrameworkOptions(CLI::App* cmd, FrameworkOptions& options,
                                              bool suppressions, bool print) {
    FrameworkOptions* o = &options;
    std::vector<CLI::Option*> added{
        cmd->add_option("--caching-allocators", o->caching_allocators,
                        "File of NAME: PATTERN lines adding caching allocators (or -NAME "
                        "dropping one) to the built-in table")
            ->type_name("FILE"),
        cmd->add_flag("--no-builtin-caching-allocators", o->no_builtin_caching_allocators,
                      "Start from an empty table of caching allocators instead of the built-in "
                      "one"),
        cmd->add_flag("--count-cached", o->count_cached,
                      "Count what caching allocators (PyTorch, CuPy, XLA, RMM) still hold at "
                      "exit as leaked, as if they had no cache"),
    };
    if (print) {
        added.push_back(cmd->add_flag("--print-caching-allocators", o->print_caching_allocators,
                                      "Print the table of caching allocators in effect and exit"));
    }
    if (suppressions) {
        added.push_back(cmd->add_flag("--no-builtin-suppressions", o->no_builtin_suppressions,
                                      "Do not suppress the one-time allocations of cuBLAS, "
                                      "cuDNN, cuFFT, NCCL and the CUDA runtime"));
    }
    if (suppressions && print) {
        added.push_back(cmd->add_flag(
            "--print-builtin-suppressions", o->print_builtin_suppressions,
            "Print the built-in suppressions, each with why it is not a leak, and exit"));
    }
    return added;
}

std::shared_ptr<const CachingAllocatorTable>
printedCachingAllocatorTable(const FrameworkOptions& options) {
    auto table = std::make_shared<CachingAllocatorTable>();
    if (!options.no_builtin_caching_allocators) {
        *table = *CachingAllocatorTable::builtin();
    }
    if (!options.caching_allocators.empty()) {
        try {
            table->extend(
                analyzer::readPatternFile(options.caching_allocators, "caching allocator table"));
        } catch (const analyzer::PatternFileError& e) {
            throw InputError(e.what());
        }
    }
    return table;
}

std::shared_ptr<const CachingAllocatorTable>
cachingAllocatorTable(const FrameworkOptions& options) {
    if (options.count_cached) {
        return nullptr;
    }
    if (options.caching_allocators.empty() && !options.no_builtin_caching_allocators) {
        return CachingAllocatorTable::builtin();
    }
    return printedCachingAllocatorTable(options);
}

bool printFrameworkTables(const FrameworkOptions& options, std::ostream& out) {
    if (options.print_builtin_suppressions) {
        out << builtinSuppressionsText();
    }
    if (options.print_caching_allocators) {
        out << printedCachingAllocatorTable(options)->text();
    }
    return options.print_builtin_suppressions || options.print_caching_allocators;
}

void applyCachingAllocators(analyzer::Report& report,
                            const std::shared_ptr<const CachingAllocatorTable>& table) {
    analyzer::LeakScope& scope = report.leak_scope;
    analyzer::Summary& summary = report.summary;
    if (!table) {
        for (analyzer::HeldReport& h : report.held_at_exit) {
            for (analyzer::HeldSite& site : h.top_sites) {
                analyzer::LeakSite leak;
                leak.bytes = site.bytes;
                leak.allocations = site.allocations;
                leak.kind = site.kind;
                leak.api = site.api;
                leak.stack = std::move(site.stack);
                leak.pid = h.pid;
                leak.stack_id = site.stack_id;
                report.leaks.push_back(std::move(leak));
            }
            scope.bytes += h.bytes;
            scope.allocations += h.allocations;
            scope.sites += h.sites;
        }
        summary.leaked_bytes += summary.held_at_exit_bytes;
        summary.leaked_allocations += summary.held_at_exit_allocations;
        summary.held_at_exit_bytes = summary.held_at_exit_allocations = 0;
        report.held_at_exit.clear();
        std::stable_sort(report.leaks.begin(), report.leaks.end(),
                         [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
        return;
    }
    std::vector<analyzer::LeakSite> kept;
    for (analyzer::LeakSite& leak : report.leaks) {
        const analyzer::CachingAllocator* a = table->match(leak.stack);
        if (!a) {
            kept.push_back(std::move(leak));
            continue;
        }
        auto it = std::find_if(report.held_at_exit.begin(), report.held_at_exit.end(),
                               [&](const analyzer::HeldReport& h) {
                                   return h.pid == leak.pid && h.allocator == a->name;
                               });
        if (it == report.held_at_exit.end()) {
            it = report.held_at_exit.insert(report.held_at_exit.end(),
                                            analyzer::HeldReport{leak.pid, a->name, 0, 0, 0, {}});
        }
        it->bytes += leak.bytes;
        it->allocations += leak.allocations;
        ++it->sites;
        it->top_sites.push_back(analyzer::HeldSite{leak.bytes, leak.allocations, leak.kind,
                                                   leak.api, std::move(leak.stack), leak.stack_id});
        scope.bytes -= std::min(scope.bytes, leak.bytes);
        scope.allocations -= std::min(scope.allocations, leak.allocations);
        scope.sites -= std::min<uint64_t>(scope.sites, 1);
        summary.leaked_bytes -= std::min(summary.leaked_bytes, leak.bytes);
        summary.leaked_allocations -= std::min(summary.leaked_allocations, leak.allocations);
        summary.held_at_exit_bytes += leak.bytes;
        summary.held_at_exit_allocations += leak.allocations;
    }
    report.leaks = std::move(kept);
}

} // namespace gmt::cli
