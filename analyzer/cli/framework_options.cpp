#include "cli/framework_options.h"

#include "check/builtin_suppressions.h"
#include "cli/path_option.h"
#include "cli/report_input.h"

#include <mutex>

#include <vector>

namespace gmt::cli {

using analyzer::CachingAllocatorTable;

CLI::Option* addUserCodeOption(CLI::App* cmd, std::vector<std::string>& roots) {
    return cmd
        ->add_option("--user-code", roots,
                     "Your code's directory (several: repeat, or DIR:DIR): stacks begin with "
                     "the innermost frame under one, sites are named by it. Default: Python "
                     "files outside the standard library and installed packages, native "
                     "frames under the program's directory")
        ->type_name("DIR")
        ->delimiter(':')
        ->envname("GPUMEMTRACE_USER_CODE")
        ->check(nonEmptyPath());
}

std::vector<CLI::Option*> addFrameworkOptions(CLI::App* cmd, FrameworkOptions& options,
                                              bool suppressions, bool print) {
    FrameworkOptions* o = &options;
    std::vector<CLI::Option*> added{
        addUserCodeOption(cmd, o->user_code),
        cmd->add_option("--caching-allocators", o->caching_allocators,
                        "File of NAME: PATTERN lines adding caching allocators (or -NAME "
                        "dropping one) to the built-in table")
            ->type_name("FILE")
            ->check(nonEmptyPath()),
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
        added.push_back(cmd->add_option("--suppressions", o->suppressions,
                                        "File of leak:PATTERN / error:PATTERN lines to ignore")
                            ->type_name("FILE")
                            ->check(nonEmptyPath()));
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

Suppressions suppressionsOf(const FrameworkOptions& options) {
    Suppressions suppressions;
    if (!options.suppressions.empty()) {
        suppressions = Suppressions::load(options.suppressions);
    }
    if (!options.no_builtin_suppressions) {
        suppressions.add(builtinSuppressions());
    }
    return suppressions;
}

analyzer::LeakFilter leakFilterOf(Suppressions& suppressions) {
    if (suppressions.empty()) {
        return nullptr;
    }
    auto mutex = std::make_shared<std::mutex>(); // matches are counted
    return [&suppressions, mutex](const analyzer::LeakSite& site) {
        std::lock_guard lock(*mutex);
        return suppressions.matchLeak(site) != nullptr;
    };
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

} // namespace gmt::cli
