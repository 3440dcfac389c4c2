// The DWARF symbolizer against this very process: the probes report addresses whose
// function, file and line are known, and the module map comes from dl_iterate_phdr
// exactly as the recorder builds it.
#include "base/hex.h"
#include "symbols/dwarf/build_id.h"
#include "symbols/dwarf/dwarf_symbolizer.h"

#include "self_modules.h"
#include "symtest_lib.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using gmt::analyzer::Frame;
using gmt::analyzer::ModuleProblem;
using gmt::analyzer::SymbolizeOptions;
using gmt::format::ModuleInfo;
namespace fs = std::filesystem;

namespace {

volatile int g_sink = 0;

[[gnu::noinline]] gmt::symtest::Probe exeProbe() {
    gmt::symtest::Probe probe{gmt::symtest::callerAddress(), __LINE__};
    g_sink = 1; // keeps the probe call from becoming a tail call
    return probe;
}

std::string basename(const std::string& path) {
    return fs::path(path).filename().string();
}

struct Reported {
    std::string path;
    ModuleProblem problem;
};

// Options whose problem callback records into `reported`.
SymbolizeOptions recording(std::vector<Reported>& reported) {
    SymbolizeOptions options;
    options.on_problem = [&reported](const ModuleInfo& module, ModuleProblem problem,
                                     std::string_view) {
        reported.push_back({module.path, problem});
    };
    return options;
}

std::unique_ptr<gmt::analyzer::Symbolizer> selfSymbolizer(SymbolizeOptions options = {}) {
    auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(std::move(options));
    for (const ModuleInfo& module : gmt::symtest::selfModules()) {
        symbolizer->addModule(module);
    }
    return symbolizer;
}

ModuleInfo moduleOf(uintptr_t address) {
    auto module = gmt::symtest::moduleContaining(gmt::symtest::selfModules(), address);
    REQUIRE(module.has_value());
    return *module;
}

// A fresh directory, removed with everything in it at scope exit.
struct TempDir {
    fs::path path;
    TempDir() {
        std::random_device random;
        path = fs::temp_directory_path() /
               ("gmt_symtest_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

// DIR/.build-id/xx/yyyy.debug holding `debug_file`, the layout distributions install.
void installBuildIdDebugFile(const fs::path& dir, const std::string& build_id,
                             const fs::path& debug_file) {
    std::string hex = gmt::analyzer::bytesHex(build_id);
    fs::path target = dir / ".build-id" / hex.substr(0, 2) / (hex.substr(2) + ".debug");
    fs::create_directories(target.parent_path());
    fs::copy_file(debug_file, target);
}

const fs::path kArtifacts = GMT_SYMTEST_ARTIFACTS;

void checkModuleOffsetOnly(const std::vector<Frame>& frames, uint64_t address,
                           const std::string& module) {
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].address == address);
    CHECK(frames[0].module == module);
    CHECK(frames[0].function.empty());
    CHECK(frames[0].file.empty());
    CHECK(frames[0].line == 0);
    CHECK_FALSE(frames[0].inlined);
}

} // namespace

TEST_CASE("a plain function gives its demangled name, file and line", "[symbolize]") {
    auto probe = gmt::symtest::plainProbe();
    auto frames = selfSymbolizer()->symbolize(probe.address);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].address == probe.address);
    CHECK(basename(frames[0].module) == "libgmt_symtest.so");
    CHECK(frames[0].function == "gmt::symtest::plainProbe()");
    CHECK(basename(frames[0].file) == "symtest_lib.cpp");
    CHECK(frames[0].line == probe.inner_line);
    CHECK_FALSE(frames[0].inlined);
}

TEST_CASE("inlined code gives one frame per inlined call, innermost first", "[symbolize]") {
    auto probe = gmt::symtest::outerFunction(7);
    REQUIRE(probe.value == 7);

    SECTION("with inline frames") {
        auto frames = selfSymbolizer()->symbolize(probe.address);
        REQUIRE(frames.size() == 2);
        CHECK(frames[0].function == "gmt::symtest::inlinedHelper(int)");
        CHECK(basename(frames[0].file) == "symtest_lib.cpp");
        CHECK(frames[0].line == probe.inner_line);
        CHECK(frames[0].inlined);
        CHECK(frames[1].function == "gmt::symtest::outerFunction(int)");
        CHECK(basename(frames[1].file) == "symtest_lib.cpp");
        CHECK(frames[1].line == probe.outer_line);
        CHECK_FALSE(frames[1].inlined);
        for (const Frame& frame : frames) {
            CHECK(frame.address == probe.address);
            CHECK(basename(frame.module) == "libgmt_symtest.so");
        }
    }
    SECTION("without inline frames: the real function at the call site") {
        SymbolizeOptions options;
        options.inline_frames = false;
        auto frames = selfSymbolizer(options)->symbolize(probe.address);
        REQUIRE(frames.size() == 1);
        CHECK(frames[0].function == "gmt::symtest::outerFunction(int)");
        CHECK(frames[0].line == probe.outer_line);
        CHECK_FALSE(frames[0].inlined);
    }
    SECTION("mangled names when demangling is off") {
        SymbolizeOptions options;
        options.demangle = false;
        auto frames = selfSymbolizer(options)->symbolize(probe.address);
        REQUIRE(frames.size() == 2);
        CHECK(frames[0].function == "_ZN3gmt7symtest13inlinedHelperEi");
        CHECK(frames[1].function == "_ZN3gmt7symtest13outerFunctionEi");
    }
}

TEST_CASE("the main executable, PIE or not", "[symbolize]") {
    auto probe = exeProbe();
    ModuleInfo exe = moduleOf(probe.address);
#if GMT_SYMTEST_PIE
    CHECK(exe.base != 0);
#else
    CHECK(exe.base == 0);
#endif
    auto frames = selfSymbolizer()->symbolize(probe.address);
    REQUIRE(!frames.empty());
    CHECK(frames.back().function.find("exeProbe") != std::string::npos);
    CHECK(basename(frames.back().file) == "dwarf_symbolizer_test.cpp");
    CHECK(frames.back().line == probe.inner_line);
    CHECK(frames.back().module == exe.path);
}

TEST_CASE("without DWARF the symbol table names the function", "[symbolize]") {
    uintptr_t address = gmt::symtest::symbolOnlyProbe();
    std::vector<Reported> reported;
    auto frames = selfSymbolizer(recording(reported))->symbolize(address);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].function == "gmt::symtest::symbolOnlyProbe()");
    CHECK(frames[0].file.empty());
    CHECK(frames[0].line == 0);
    CHECK(basename(frames[0].module) == "libgmt_symtest_nodebug.so");
    REQUIRE(reported.size() == 1);
    CHECK(reported[0].problem == ModuleProblem::NoDebugInfo);
}

TEST_CASE("a missing file gives module and address, reported once", "[symbolize]") {
    std::vector<Reported> reported;
    auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(recording(reported));
    ModuleInfo gone;
    gone.base = gone.start = 0x400000;
    gone.end = 0x500000;
    gone.path = "/nonexistent/libgone.so";
    gone.build_id = "\x01\x02\x03\x04";
    symbolizer->addModule(gone);
    checkModuleOffsetOnly(symbolizer->symbolize(0x401234), 0x401234, "/nonexistent/libgone.so");
    checkModuleOffsetOnly(symbolizer->symbolize(0x402000), 0x402000, "/nonexistent/libgone.so");
    REQUIRE(reported.size() == 1);
    CHECK(reported[0].problem == ModuleProblem::Missing);

    // Outside every module: the address alone.
    checkModuleOffsetOnly(symbolizer->symbolize(0x500000), 0x500000, "");
}

TEST_CASE("files that are not ELF objects are survived", "[symbolize]") {
    TempDir dir;
    ModuleInfo real = moduleOf(gmt::symtest::plainProbe().address);
    std::vector<fs::path> bad = {dir.path / "text.so", dir.path / "truncated.so", dir.path};
    std::ofstream(bad[0]) << "not an ELF file\n";
    {
        std::ifstream in(real.path, std::ios::binary);
        std::string head(200, '\0');
        in.read(head.data(), static_cast<std::streamsize>(head.size()));
        std::ofstream(bad[1], std::ios::binary) << head;
    }
    for (const fs::path& path : bad) {
        std::vector<Reported> reported;
        auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(recording(reported));
        ModuleInfo module = real;
        module.path = path.string();
        symbolizer->addModule(module);
        uint64_t address = module.start + 16;
        checkModuleOffsetOnly(symbolizer->symbolize(address), address, module.path);
        REQUIRE(reported.size() == 1);
        CHECK(reported[0].problem == ModuleProblem::NotElf);
    }
}

TEST_CASE("a rebuilt file (other build-id) is not trusted", "[symbolize]") {
    auto probe = gmt::symtest::plainProbe();
    ModuleInfo module = moduleOf(probe.address);
    REQUIRE(!module.build_id.empty());
    module.build_id[0] = static_cast<char>(module.build_id[0] ^ 0x5a);

    std::vector<Reported> reported;
    auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(recording(reported));
    symbolizer->addModule(module);
    checkModuleOffsetOnly(symbolizer->symbolize(probe.address), probe.address,
                          module.path + std::string(gmt::analyzer::kBuildIdMismatchSuffix));
    REQUIRE(reported.size() == 1);
    CHECK(reported[0].problem == ModuleProblem::BuildIdMismatch);
}

TEST_CASE("a rebuilt file is replaced by the debug file of the recorded build-id", "[symbolize]") {
    auto probe = gmt::symtest::plainProbe();
    ModuleInfo module = moduleOf(probe.address);
    // The path now holds another object (another build-id) ...
    module.path = moduleOf(gmt::symtest::symbolOnlyProbe()).path;
    // ... but the debug file of the build that ran is installed.
    TempDir dir;
    installBuildIdDebugFile(dir.path, module.build_id,
                            kArtifacts / "debuglink" / "libgmt_symtest.so.debug");

    std::vector<Reported> reported;
    SymbolizeOptions options = recording(reported);
    options.debuginfo_path = dir.path.string();
    auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(options);
    symbolizer->addModule(module);
    auto frames = symbolizer->symbolize(probe.address);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].module == module.path);
    CHECK(frames[0].function == "gmt::symtest::plainProbe()");
    CHECK(frames[0].line == probe.inner_line);
    CHECK(reported.empty());
}

TEST_CASE("separate debug files are found", "[symbolize]") {
    auto probe = gmt::symtest::plainProbe();
    ModuleInfo module = moduleOf(probe.address);
    TempDir dir;
    std::vector<Reported> reported;
    SymbolizeOptions options = recording(reported);
    bool installed = true;

    SECTION("through .gnu_debuglink") {
        module.path = (kArtifacts / "debuglink" / "libgmt_symtest.so").string();
    }
    SECTION("through a .build-id tree") {
        module.path = (kArtifacts / "nolink" / "libgmt_symtest.so").string();
        installBuildIdDebugFile(dir.path, module.build_id,
                                kArtifacts / "debuglink" / "libgmt_symtest.so.debug");
        options.debuginfo_path = dir.path.string();
    }
    SECTION("none installed: the stripped file's symbol table only") {
        module.path = (kArtifacts / "nolink" / "libgmt_symtest.so").string();
        options.debuginfo_path = dir.path.string();
        installed = false;
    }

    auto symbolizer = gmt::analyzer::makeDwarfSymbolizer(options);
    symbolizer->addModule(module);
    auto frames = symbolizer->symbolize(probe.address);
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].module == module.path);
    CHECK(frames[0].function == "gmt::symtest::plainProbe()");
    if (installed) {
        CHECK(basename(frames[0].file) == "symtest_lib.cpp");
        CHECK(frames[0].line == probe.inner_line);
        CHECK(reported.empty());
    } else {
        CHECK(frames[0].file.empty());
        CHECK(frames[0].line == 0);
        REQUIRE(reported.size() == 1);
        CHECK(reported[0].problem == ModuleProblem::NoDebugInfo);
    }
}

TEST_CASE("a module given again for a reused range wins over the cache", "[symbolize]") {
    auto probe = gmt::symtest::plainProbe();
    ModuleInfo real = moduleOf(probe.address);
    ModuleInfo gone = real;
    gone.path = "/nonexistent/unloaded.so";

    auto symbolizer = gmt::analyzer::makeDwarfSymbolizer();
    symbolizer->addModule(gone);
    CHECK(symbolizer->symbolize(probe.address)[0].function.empty());
    symbolizer->addModule(real);
    auto frames = symbolizer->symbolize(probe.address);
    CHECK(frames[0].function == "gmt::symtest::plainProbe()");
    // Cached answers are the same answers.
    CHECK(symbolizer->symbolize(probe.address)[0].function == frames[0].function);
}
