// The recorder's settings: a bad GPUMEMTRACE_* value is a warning — once, and only in a
// process that uses CUDA (every process of a program's tree loads the library: shells,
// compilers, `sh -c` children must stay silent) — and the default is used.
#include "subprocess.h"
#include "temp_dir.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace gmt::test;

namespace {

const std::string kPrograms = GMT_PROGRAM_DIR;

ProcessResult runWith(const TempDir& dir, const std::vector<std::string>& argv,
                      const Environment& settings) {
    Environment env = {{"LD_PRELOAD", GMT_BUILD_DIR "/lib/libgpumemtrace.so"},
                       {"LD_LIBRARY_PATH", GMT_BUILD_DIR "/lib/cudasim"},
                       {"GPUMEMTRACE_OUTPUT", dir.file("t.%p.gmtrace")}};
    env.insert(env.end(), settings.begin(), settings.end());
    return runProcess(argv, env);
}

size_t occurrences(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

} // namespace

TEST_CASE("a bad setting is one warning in a process that uses CUDA", "[recorder][config]") {
    const std::pair<const char*, const char*> cases[] = {
        {"GPUMEMTRACE_LOG_LEVEL", "loud"},
        {"GPUMEMTRACE_ENABLE", "maybe"},
        {"GPUMEMTRACE_STACK_DEPTH", "deep"},
        {"GPUMEMTRACE_BUFFER_SIZE", "huge"},
        {"GPUMEMTRACE_ON_FULL", "sometimes"},
        {"GPUMEMTRACE_PYTHON", "garbage"},
        {"GPUMEMTRACE_CACHING_ALLOCATOR", "yes please"},
    };
    for (auto [name, value] : cases) {
        TempDir dir;
        ProcessResult r = runWith(dir, {kPrograms + "/lifecycle", "exit"}, {{name, value}});
        INFO(name << "=" << value << "\nstderr: " << r.err);
        CHECK(r.exit_code == 3); // the program's own status, untouched
        CHECK(occurrences(r.err, std::string(name) + "=" + value) == 1);
        CHECK(occurrences(r.err, "[gpumemtrace] warning:") == 1);
        // The default was used: tracing went on.
        CHECK(listFiles(dir.path(), ".gmtrace").size() == 1);
    }
}

TEST_CASE("a process that never uses CUDA says nothing about bad settings", "[recorder][config]") {
    TempDir dir;
    ProcessResult r = runWith(dir, {kPrograms + "/lifecycle", "nocuda"},
                              {{"GPUMEMTRACE_LOG_LEVEL", "loud"},
                               {"GPUMEMTRACE_ENABLE", "maybe"},
                               {"GPUMEMTRACE_STACK_DEPTH", "deep"}});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "no CUDA here\n");
    CHECK(r.err.empty());
}

TEST_CASE("a forked child does not repeat its parent's warning", "[recorder][config]") {
    TempDir dir;
    ProcessResult r =
        runWith(dir, {kPrograms + "/lifecycle", "fork"}, {{"GPUMEMTRACE_LOG_LEVEL", "loud"}});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(listFiles(dir.path(), ".gmtrace").size() == 2);
    CHECK(occurrences(r.err, "GPUMEMTRACE_LOG_LEVEL=loud") == 1);
}

TEST_CASE("GPUMEMTRACE_ENABLE takes 0/1 and the usual words for them", "[recorder][config]") {
    for (const char* off : {"0", "false", "no", "off"}) {
        TempDir dir;
        ProcessResult r =
            runWith(dir, {kPrograms + "/lifecycle", "exit"}, {{"GPUMEMTRACE_ENABLE", off}});
        INFO(off << ": " << r.err);
        CHECK(r.exit_code == 3);
        CHECK(r.err.empty());
        CHECK(listFiles(dir.path(), ".gmtrace").empty());
    }
    for (const char* on : {"1", "true", "yes", "on"}) {
        TempDir dir;
        ProcessResult r =
            runWith(dir, {kPrograms + "/lifecycle", "exit"}, {{"GPUMEMTRACE_ENABLE", on}});
        INFO(on << ": " << r.err);
        CHECK(r.err.empty());
        CHECK(listFiles(dir.path(), ".gmtrace").size() == 1);
    }
}

TEST_CASE("a buffer size set too large is clamped, with one warning", "[recorder][config]") {
    TempDir dir;
    ProcessResult r = runWith(dir, {kPrograms + "/lifecycle", "exit"},
                              {{"GPUMEMTRACE_BUFFER_SIZE", "99999999G"}});
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK(occurrences(r.err, "clamped to 256M") == 1);
    const std::vector<std::string> traces = listFiles(dir.path(), ".gmtrace");
    REQUIRE(traces.size() == 1);
    // The ring (and so the file) is 256 MiB, not the 2 GiB the largest ring would be.
    CHECK(std::filesystem::file_size(traces[0]) < (257u << 20));
}

TEST_CASE("a setting's value is echoed without its control characters", "[recorder][config]") {
    TempDir dir;
    ProcessResult r = runWith(dir, {kPrograms + "/lifecycle", "exit"},
                              {{"GPUMEMTRACE_PYTHON", "\x1b]0;pwned\x07\x1b[31mred"}});
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("GPUMEMTRACE_PYTHON=\\x1b]0;pwned\\x07\\x1b[31mred is not valid") !=
          std::string::npos);
    CHECK(r.err.find('\x1b') == std::string::npos);
    CHECK(r.err.find('\x07') == std::string::npos);
}
