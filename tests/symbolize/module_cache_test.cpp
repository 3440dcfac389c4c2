// The module cache shared by the symbolizers of a run (symbols/dwarf/module_cache.h):
// the processes of a job share one entry per object, its sessions stay within their
// bound, and names survive a descriptor limit that leaves almost nothing free.
#include "symbols/dwarf/dwarf_symbolizer.h"
#include "symbols/dwarf/module_cache.h"

#include "self_modules.h"
#include "symtest_lib.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using gmt::analyzer::Frame;
using gmt::analyzer::ModuleProblem;
using gmt::analyzer::SymbolizeOptions;
using gmt::analyzer::symbolize::ModuleCache;
using gmt::analyzer::symbolize::ModuleCacheLimits;
using gmt::format::ModuleInfo;

namespace {

ModuleInfo moduleOf(uintptr_t address) {
    auto module = gmt::symtest::moduleContaining(gmt::symtest::selfModules(), address);
    REQUIRE(module.has_value());
    return *module;
}

// The same object as another process loaded it: `shift` bytes higher.
ModuleInfo moved(ModuleInfo module, uint64_t shift) {
    module.base += shift;
    module.start += shift;
    module.end += shift;
    return module;
}

std::string nameOf(const std::vector<Frame>& frames) {
    return frames.empty() ? std::string() : frames.back().function;
}

} // namespace

TEST_CASE("two processes that loaded one object share its entry", "[symbolize][cache]") {
    auto probe = gmt::symtest::plainProbe();
    const ModuleInfo here = moduleOf(probe.address);
    const uint64_t shift = 0x10000000;
    const ModuleInfo there = moved(here, shift);

    auto cache = std::make_shared<ModuleCache>(SymbolizeOptions{});
    auto first = gmt::analyzer::makeDwarfSymbolizer(cache);
    auto second = gmt::analyzer::makeDwarfSymbolizer(cache);
    first->addModule(here);
    second->addModule(there);

    auto a = first->symbolize(probe.address);
    auto b = second->symbolize(probe.address + shift);
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CHECK(a[0].function == "gmt::symtest::plainProbe()");
    CHECK(b[0].function == a[0].function);
    CHECK(b[0].line == probe.inner_line);
    CHECK(a[0].address == probe.address);
    CHECK(b[0].address == probe.address + shift);
    CHECK(b[0].module == here.path);
    CHECK(cache->entries() == 1);
    CHECK(cache->openModules() == 1);
}

TEST_CASE("a problem is reported once per object, not once per process", "[symbolize][cache]") {
    int reported = 0;
    SymbolizeOptions options;
    options.on_problem = [&](const ModuleInfo&, ModuleProblem problem, std::string_view) {
        CHECK(problem == ModuleProblem::NotElf);
        ++reported;
    };
    auto cache = std::make_shared<ModuleCache>(options);
    ModuleInfo directory = moduleOf(gmt::symtest::plainProbe().address);
    directory.path = std::filesystem::temp_directory_path().string();
    for (int process = 0; process < 3; ++process) {
        auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(cache);
        symbolizer->addModule(directory);
        auto frames = symbolizer->symbolize(directory.start + 16);
        REQUIRE(frames.size() == 1);
        CHECK(frames[0].function.empty());
        CHECK(frames[0].module == directory.path);
    }
    CHECK(reported == 1);
    CHECK(cache->entries() == 1);
}

TEST_CASE("no more sessions open than the bound, and closed ones reopen", "[symbolize][cache]") {
    auto probe = gmt::symtest::plainProbe();
    auto inlined = gmt::symtest::outerFunction(3);
    const uintptr_t symbol_only = gmt::symtest::symbolOnlyProbe();
    // Every answer is resolved again (one cached address), so closed sessions are needed.
    auto cache = std::make_shared<ModuleCache>(
        SymbolizeOptions{}, ModuleCacheLimits{.max_open = 1, .max_cached_addresses = 1});
    auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(cache);
    for (const ModuleInfo& module : gmt::symtest::selfModules()) {
        symbolizer->addModule(module);
    }
    for (int round = 0; round < 3; ++round) {
        CHECK(nameOf(symbolizer->symbolize(probe.address)) == "gmt::symtest::plainProbe()");
        CHECK(cache->openModules() <= 1);
        CHECK(nameOf(symbolizer->symbolize(symbol_only)) == "gmt::symtest::symbolOnlyProbe()");
        CHECK(cache->openModules() <= 1);
        CHECK(nameOf(symbolizer->symbolize(inlined.address)) == "gmt::symtest::outerFunction(int)");
    }
    CHECK(cache->entries() == 2);
}

TEST_CASE("names survive a descriptor limit with almost nothing free", "[symbolize][cache]") {
    auto probe = gmt::symtest::plainProbe();
    const uintptr_t symbol_only = gmt::symtest::symbolOnlyProbe();
    const std::vector<ModuleInfo> modules = gmt::symtest::selfModules();
    // In a child: the limit and the descriptors used up must not leak into other tests.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        struct rlimit limit {
            64, 64
        };
        if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
            ::_exit(2);
        }
        // Use up all but three descriptors.
        std::vector<int> held;
        for (;;) {
            int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                break;
            }
            held.push_back(fd);
        }
        for (int i = 0; i < 3 && !held.empty(); ++i) {
            ::close(held.back());
            held.pop_back();
        }
        int failures = 0;
        auto cache = std::make_shared<ModuleCache>(
            SymbolizeOptions{}, ModuleCacheLimits{.max_open = 0, .max_cached_addresses = 1});
        // A hundred processes of one job, each asking for both objects.
        for (int process = 0; process < 100; ++process) {
            auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(cache);
            for (const ModuleInfo& module : modules) {
                symbolizer->addModule(moved(module, uint64_t(process) << 32));
            }
            const uint64_t shift = uint64_t(process) << 32;
            failures += nameOf(symbolizer->symbolize(probe.address + shift)) !=
                        "gmt::symtest::plainProbe()";
            failures += nameOf(symbolizer->symbolize(symbol_only + shift)) !=
                        "gmt::symtest::symbolOnlyProbe()";
        }
        ::_exit(failures == 0 && cache->entries() == 2 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}
