// The CLI on hostile inputs and destinations: never a hang, never an abort, one line and
// exit status 2 for what it cannot use. A trace written to mislead (module paths naming
// what is not a module, sizes whose sums wrap, allocations over live ones, escape
// sequences bound for a CI log) is refused, saturated or reported, never silently turned
// into a wrong verdict. A test here that regresses into a hang is ended by the test's
// ctest TIMEOUT (tests/analyzer/CMakeLists.txt); when the code is right, nothing here
// depends on time.
#include "base/regular_file.h"
#include "report/report_json.h"
#include "report_fixture.h"
#include "support/run_command.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {

constexpr uint64_t B = 0x7f0000000000;

std::string cli(const std::string& args) {
    return std::string(GMT_CLI) + " " + args;
}

size_t lineCount(const std::string& s) {
    return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

std::string leakTrace(const TempDir& dir) {
    auto b = standardTrace();
    b.event(Ev::alloc(10, B, 4096));
    b.trailer(20);
    return b.write(dir.file("t.gmtrace"));
}

std::string fifo(const TempDir& dir, const std::string& name) {
    std::string path = dir.file(name);
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    return path;
}

void expectOneLineError(const CommandResult& r, const std::string& text) {
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(lineCount(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains(text));
}

} // namespace

TEST_CASE("a FIFO is refused at once as a trace, a report or a suppressions file") {
    TempDir dir;
    std::string trace = leakTrace(dir);
    std::string pipe = fifo(dir, "pipe");
    for (const std::string& args :
         {"report " + pipe, "dump " + pipe, "check " + pipe, "diff " + pipe + " " + trace,
          "diff " + trace + " " + pipe, "check --suppressions " + pipe + " " + trace}) {
        INFO(args);
        expectOneLineError(runCommand(cli(args)), "not a regular file (a FIFO)");
    }
}

TEST_CASE("a directory as the suppressions file is refused, not read as empty") {
    TempDir dir;
    std::string trace = leakTrace(dir);
    expectOneLineError(runCommand(cli("check --suppressions " + dir.path() + " " + trace)),
                       "not a regular file (a directory)");
}

TEST_CASE("a FIFO named as a module inside a trace is not opened by the symbolizer") {
    TempDir dir;
    std::string pipe = fifo(dir, "libfifo.so");
    auto b = standardTrace();
    b.module({0x500000, 0x500000, 0x600000, pipe, "\x01\x02\x03\x04"});
    b.stack(7, {0x500100, 0x500200});
    b.event(Ev::alloc(10, B, 4096, Api::cudaMalloc, Kind::Device, 7));
    b.trailer(20);
    std::string trace = b.write(dir.file("t.gmtrace"));
    for (const char* command : {"report ", "check "}) {
        auto r = runCommand(cli(command + trace));
        INFO(command << "\nstdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.status == (std::string(command) == "check " ? 1 : 0));
        CHECK_THAT(r.out, Catch::Contains("libfifo.so"));
    }
}

TEST_CASE("options that size memory or output are bounded, with a clear one-line error") {
    TempDir dir;
    // Events 10 s apart: a timeline of 10^10 points would be allocated for real.
    auto b = standardTrace();
    b.event(Ev::alloc(0, B, 4096));
    b.event(Ev::alloc(10'000'000'000ull, B + 8192, 4096));
    b.trailer(10'000'000'001ull);
    std::string trace = b.write(dir.file("t.gmtrace"));
    expectOneLineError(runCommand(cli("report --timeline-points 10000000000 " + trace)),
                       "--timeline-points: '10000000000' is not a whole number from 1 to 1000000");
    expectOneLineError(runCommand(cli("report --top 0 " + trace)),
                       "--top: '0' is not a whole number from 1 to 1000000");
    expectOneLineError(runCommand(cli("report --top 99999999999999999999 " + trace)),
                       "is not a whole number from 1 to 1000000");
    expectOneLineError(runCommand(cli("report --top 1e3 " + trace)),
                       "is not a whole number from 1 to 1000000");
    expectOneLineError(runCommand(cli("report --frames 0 " + trace)),
                       "--frames: '0' is not a whole number from 1 to 4096");
    expectOneLineError(runCommand(cli("check --frames -1 " + trace)),
                       "--frames: '-1' is not a whole number from 0 to 4096");
    expectOneLineError(runCommand(cli("check --top 1000001 " + trace)),
                       "--top: '1000001' is not a whole number from 0 to 1000000");
    // The largest values allowed work (a timeline keeps only the buckets that saw a value).
    CHECK(runCommand(cli("report --format json --timeline-points 1000000 --top 1000000 " + trace))
              .status == 0);
}

TEST_CASE("a report that cannot be written is an error, not exit 0") {
    TempDir dir;
    std::string trace = leakTrace(dir);
    for (const std::string& args :
         {"report " + trace + " > /dev/full", "report --format text " + trace + " > /dev/full",
          "report -o /dev/full " + trace, "dump " + trace + " > /dev/full",
          "check " + trace + " > /dev/full", "check --junit /dev/full " + trace + " > /dev/null",
          "diff " + trace + " " + trace + " > /dev/full"}) {
        INFO(args);
        expectOneLineError(runCommand(cli(args)), "No space left on device");
    }
}

TEST_CASE("nothing a command throws escapes as an abort") {
    // Bytes that are not UTF-8 in every string of the trace: whatever the views make of
    // them, the command ends with a status and at most one line, never a signal.
    TempDir dir;
    auto h = TraceBuilder::defaultHeader();
    h.command = "./app caf\xe9 \xff\xfe";
    h.executable = "/usr/bin/\xc3";
    TraceBuilder b;
    b.header(h).device();
    b.module({0x400000, 0x400000, 0x500000, "/lib/\xe9.so", ""});
    b.stack(1, {0x401000});
    b.phase(5, "ph\xe9se");
    b.event(Ev::alloc(10, B, 4096));
    b.trailer(20);
    std::string trace = b.write(dir.file("t.gmtrace"));
    for (const char* args : {"report --format json ", "report --format text ", "dump ", "check ",
                             "check --junit /dev/null "}) {
        auto r = runCommand(cli(args + trace));
        INFO(args << "\nstatus " << r.status << "\nstderr: " << r.err);
        CHECK((r.status == 0 || r.status == 1 || r.status == 2));
        CHECK(lineCount(r.err) <= 1);
    }
}

TEST_CASE("memory exhausted: one line and exit 2, never std::terminate's abort") {
    // 200 000 live allocations need some 45 MB to analyse; 30 MB of address space is
    // three times what the CLI needs to start and read a small trace. Whatever throws
    // bad_alloc, wherever, ends as one line (main's last catch).
    TempDir dir;
    auto b = standardTrace();
    constexpr size_t n = 200'000;
    for (size_t i = 0; i < n; ++i) {
        b.event(Ev::alloc(10 + i, B + i * 4096, 4096));
        if (i % 4096 == 4095) {
            b.endFrame();
        }
    }
    b.trailer(10 + n);
    std::string trace = b.write(dir.file("t.gmtrace"));
    for (const char* command : {"report --no-symbols ", "check --no-symbols "}) {
        INFO(command);
        auto r = runCommand("ulimit -v 30000 && exec " + cli(command + trace));
        expectOneLineError(r, "out of memory");
    }
    // The same commands on a small trace work under the same limit: the limit is not
    // what fails them.
    std::string small = leakTrace(dir);
    CHECK(runCommand("ulimit -v 30000 && exec " + cli("report --no-symbols " + small)).status == 0);
}

TEST_CASE("record refuses a library path LD_PRELOAD cannot carry, instead of tracing nothing") {
    TempDir dir;
    // A real copy of the library under a directory with a space: LD_PRELOAD would be cut
    // into "/tmp/.../with" and "space/libgpumemtrace.so", the second searched from the
    // program's working directory.
    std::string spaced = dir.file("with space");
    REQUIRE(::mkdir(spaced.c_str(), 0700) == 0);
    REQUIRE(runCommand("cp " + std::string(GMT_PRELOAD_LIBRARY) + " '" + spaced + "/'").status ==
            0);
    auto r = runCommand(cli("record -q --library '" + spaced + "/libgpumemtrace.so' -- true"));
    expectOneLineError(r, "contains a space or a colon");
    CHECK_THAT(r.err, Catch::Contains("with space/libgpumemtrace.so"));
}

TEST_CASE("record refuses an output path naming an existing non-regular file") {
    TempDir dir;
    std::string pipe = fifo(dir, "pipe.gmtrace");
    for (const std::string& output : {std::string("/dev/null"), dir.path(), pipe}) {
        INFO(output);
        expectOneLineError(runCommand(cli("record -q -o " + output + " -- true")),
                           "not a regular file");
    }
}

TEST_CASE("an output FIFO that no process reads is refused at once, one that is read is written") {
    TempDir dir;
    std::string trace = leakTrace(dir);
    std::string pipe = fifo(dir, "out");
    // `timeout`: a regression into a hang fails here, not at the test's ctest TIMEOUT.
    for (const std::string& args :
         {"report -o " + pipe + " " + trace, "report --format html -o " + pipe + " " + trace,
          "check --junit " + pipe + " " + trace + " > /dev/null",
          "check --sarif " + pipe + " " + trace + " > /dev/null"}) {
        INFO(args);
        expectOneLineError(runCommand("timeout 60 " + cli(args)),
                           "a FIFO that no process is reading");
    }
    // With a reader (as `--junit >(xmllint -)` has), the FIFO is a destination like a pipe.
    // The reader is this process, open before the CLI starts: a reader started beside the
    // CLI may not have opened the FIFO yet when the CLI looks for one (then the CLI is right
    // to refuse, and a `cat` still waiting for a writer would never end). A read with no
    // writer returns 0 at once, so the reading thread reads until the CLI has exited.
    const int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(reader >= 0);
    REQUIRE(::fcntl(reader, F_SETFL, 0) == 0); // blocking reads from here on
    std::atomic<bool> cli_done{false};
    std::string copy;
    std::thread drain([&] {
        char buf[4096];
        for (;;) {
            const bool done = cli_done.load();
            const ssize_t n = ::read(reader, buf, sizeof buf);
            if (n > 0) {
                copy.append(buf, static_cast<size_t>(n));
            } else if (n == 0 && done) {
                break; // no writer, and none to come
            } else if (n == 0 || errno == EINTR) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1)); // not yet opened
            } else {
                break;
            }
        }
    });
    auto r = runCommand("timeout 60 " + cli("report --format json -o " + pipe + " " + trace));
    cli_done = true;
    drain.join();
    ::close(reader);
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK_THAT(copy, Catch::Contains("\"leaked_bytes\": 4096"));
}

TEST_CASE("output files are created 0600; an existing file keeps its mode") {
    TempDir dir;
    std::string trace = leakTrace(dir);
    auto mode = [](const std::string& path) {
        struct stat st {};
        REQUIRE(::stat(path.c_str(), &st) == 0);
        return st.st_mode & 07777;
    };
    const std::string report = dir.file("r.txt"), html = dir.file("r.html"),
                      junit = dir.file("j.xml"), sarif = dir.file("s.sarif");
    // umask 022 would leave 0644 from a creation mode of 0666.
    REQUIRE(runCommand("umask 022 && " + cli("report -o " + report + " " + trace)).status == 0);
    REQUIRE(
        runCommand("umask 022 && " + cli("report --format html -o " + html + " " + trace)).status ==
        0);
    REQUIRE(runCommand("umask 022 && " + cli("check --junit " + junit + " --sarif " + sarif + " " +
                                             trace + " > /dev/null"))
                .status == 1);
    for (const std::string& path : {report, html, junit, sarif}) {
        INFO(path);
        CHECK(mode(path) == 0600);
    }
    REQUIRE(::chmod(report.c_str(), 0644) == 0);
    REQUIRE(runCommand(cli("report -o " + report + " " + trace)).status == 0);
    CHECK(mode(report) == 0644);
}

TEST_CASE("a directory that cannot be read is an error naming it, not one without traces") {
    TempDir dir;
    // Root reads any directory: the CLI then runs as nobody, as an ordinary user would.
    const bool root = ::geteuid() == 0;
    if (root && runCommand("command -v setpriv").status != 0) {
        WARN("not checked: running as root without setpriv");
        return;
    }
    const std::string as_user = root ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    std::string top = dir.file("ranks");
    std::string sealed = dir.file("ranks/sealed");
    REQUIRE(::mkdir(top.c_str(), 0755) == 0);
    REQUIRE(::mkdir(sealed.c_str(), 0755) == 0);
    auto b = standardTrace();
    b.event(Ev::alloc(10, B, 4096));
    b.trailer(20);
    b.write(top + "/rank0.gmtrace");
    b.write(sealed + "/rank1.gmtrace");
    REQUIRE(runCommand("chmod a+r " + top + "/rank0.gmtrace " + sealed + "/rank1.gmtrace").status ==
            0);
    REQUIRE(::chmod(sealed.c_str(), 0) == 0);
    for (const std::string& args : {"report " + sealed, "check " + sealed, "report " + top,
                                    "check " + top, "diff " + top + " " + top}) {
        INFO(args);
        auto r = runCommand(as_user + cli(args));
        expectOneLineError(r, sealed + ": cannot read the directory: Permission denied");
    }
    ::chmod(sealed.c_str(), 0700);
}

TEST_CASE("an empty file name for a file option is a usage error, not no output") {
    TempDir dir;
    std::string trace = leakTrace(dir);
    for (const std::string& args :
         {"check --junit '' " + trace, "check --sarif '' " + trace, "report -o '' " + trace,
          "check --suppressions '' " + trace, "export --format folded -o '' " + trace,
          "report --caching-allocators '' " + trace}) {
        INFO(args);
        expectOneLineError(runCommand(cli(args)), "an empty path is not a file name");
    }
}

TEST_CASE("a value with a newline or an escape sequence is echoed on one line, made visible") {
    TempDir dir;
    std::string trace = leakTrace(dir);
    auto r = runCommand(cli("report --format 'js\non' " + trace));
    expectOneLineError(r, "js\\x0aon");
    r = runCommand(cli("check --max-leaked-bytes '1\x1b[31m' " + trace));
    expectOneLineError(r, "1\\x1b[31m");
    CHECK(r.err.find('\x1b') == std::string::npos);
    // A path given on the command line, in an error of the command itself.
    r = runCommand(cli("dump '" + dir.file("no\nsuch") + "'"));
    expectOneLineError(r, "no\\x0asuch");
}

TEST_CASE("help and version that cannot be written are an error, not exit 0") {
    for (const char* args : {"--help", "--version", "report --help", "check --help",
                             "check --print-caching-allocators"}) {
        INFO(args);
        expectOneLineError(runCommand(cli(std::string(args) + " > /dev/full")),
                           "cannot write standard output: No space left on device");
    }
    CHECK(runCommand(cli("--help > /dev/null")).status == 0);
}

TEST_CASE("only a regular file on disk is opened: never a device, a FIFO or /proc/*/mem") {
    TempDir dir;
    std::string pipe = dir.file("fifo");
    REQUIRE(::mkfifo(pipe.c_str(), 0600) == 0);
    for (const std::string& path : {std::string("/proc/self/mem"), std::string("/dev/zero"),
                                    std::string("/dev/null"), pipe, dir.path()}) {
        INFO(path);
        std::string why;
        bool not_regular = false;
        auto f = analyzer::openRegularFile(path, why, &not_regular);
        if (f) {
            ::close(f->fd);
        }
        CHECK_FALSE(f.has_value());
        CHECK(not_regular);
        CHECK_THAT(why, Catch::StartsWith("not a regular file"));
    }
    // A link to a regular file is what it leads to (modules are recorded by link names).
    std::string target = dir.file("real.so");
    std::string link = dir.file("link.so");
    runCommand("echo data > " + target);
    REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
    std::string why;
    auto f = analyzer::openRegularFile(link, why);
    REQUIRE(f.has_value());
    struct stat st {};
    REQUIRE(::stat(target.c_str(), &st) == 0);
    CHECK(f->inode == st.st_ino);
    CHECK(f->size == 5);
    ::close(f->fd);
}

TEST_CASE("a module a trace names that is refused is a warning once per module, not silence") {
    TempDir dir;
    // Two traces (two ranks) with the same modules, analysed in parallel: each module's
    // warning comes once in the run.
    std::string ranks = dir.file("ranks");
    REQUIRE(::mkdir(ranks.c_str(), 0700) == 0);
    for (const char* name : {"ranks/r0.gmtrace", "ranks/r1.gmtrace"}) {
        auto b = standardTrace();
        b.module({0x500000, 0x500000, 0x600000, "/proc/self/mem", ""});
        b.module({0x700000, 0x700000, 0x800000, "/dev/zero", ""});
        b.stack(7, {0x500100, 0x700100});
        b.stack(8, {0x500200, 0x700200});
        b.event(Ev::alloc(10, B, 4096, Api::cudaMalloc, Kind::Device, 7));
        b.event(Ev::alloc(11, B + 8192, 4096, Api::cudaMalloc, Kind::Device, 8));
        b.trailer(20);
        b.write(dir.file(name));
    }
    for (const char* command : {"report ", "check --jobs 2 "}) {
        auto r = runCommand(cli(command + ranks));
        INFO(command << "\nstdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.status == (std::string(command) == "report " ? 0 : 1));
        for (const std::string_view warning :
             {"warning: module /proc/self/mem: not a regular file (a file of /proc or /sys)",
              "warning: module /dev/zero: not a regular file (a character device)"}) {
            CHECK(r.err.find(warning) != std::string::npos);
            CHECK(r.err.find(warning) == r.err.rfind(warning)); // once
        }
        CHECK(lineCount(r.err) == 2);
        CHECK_THAT(r.out, Catch::Contains("mem+0x100")); // module + offset frames
    }
    // A module that is simply absent (a trace read on another machine) is no warning.
    auto b = standardTrace();
    b.module({0x500000, 0x500000, 0x600000, "/nonexistent/libgone.so", ""});
    b.stack(7, {0x500100});
    b.event(Ev::alloc(10, B, 4096, Api::cudaMalloc, Kind::Device, 7));
    b.trailer(20);
    auto r = runCommand(cli("report " + b.write(dir.file("absent.gmtrace"))));
    CHECK(r.status == 0);
    CHECK(r.err.empty());
}

TEST_CASE("byte sums saturate: a wrapped leak total never passes the gate") {
    TempDir dir;
    auto b = standardTrace();
    b.event(Ev::alloc(10, B, UINT64_MAX));
    b.event(Ev::alloc(11, 0x1000, 2));
    b.trailer(20);
    std::string trace = b.write(dir.file("wrap.gmtrace"));
    auto r = runCommand(cli("check --max-leaked-bytes 100 " + trace));
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("FAIL leaks: at least 16 EiB (saturated) leaked"));

    analyzer::Report rep = report(b);
    CHECK(rep.summary.leaked_bytes == UINT64_MAX);
    CHECK(rep.leak_scope.bytes == UINT64_MAX);
    CHECK(rep.processes.at(0).leaked_bytes == UINT64_MAX);
    CHECK(rep.summary.peak_bytes == UINT64_MAX);
    r = runCommand(cli("report " + trace));
    CHECK_THAT(r.out, Catch::Contains("leaked at least 16 EiB (saturated) in 2 allocations"));
}

TEST_CASE("an allocation over a live one is reported as a missing free, never absorbed") {
    TempDir dir;
    auto b = standardTrace();
    b.event(Ev::alloc(10, B, 1 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(11, B + 2 * MiB, 4096, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::alloc(12, B + 4096, 1 * MiB, Api::cudaMalloc, Kind::Device, 3)); // over the first
    b.trailer(20);
    analyzer::Report rep = report(b);
    const auto& p = rep.processes.at(0);
    REQUIRE(p.missing_events.has_value());
    CHECK(p.missing_events->unrecorded_frees == 1);
    // The one allocated before the missing free may have lost its free too: uncertain.
    CHECK(rep.summary.uncertain_leaked_bytes == 4096);
    CHECK(rep.summary.leaked_bytes == 1 * MiB + 4096);
    CHECK(reportSchema().validate(analyzer::toJson(rep)).empty());

    std::string trace = b.write(dir.file("overlap.gmtrace"));
    auto r = runCommand(cli("check " + trace));
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("FAIL trace: events missing (1 free not recorded (an "
                                      "allocation made over a live one))"));
    CHECK(runCommand(cli("check --allow-incomplete " + trace)).status == 1); // 1 MiB leaked
    r = runCommand(cli("report " + trace));
    CHECK_THAT(r.out, Catch::Contains("1 free not recorded"));
}

TEST_CASE("GitHub annotations carry no raw control character from the trace") {
    TempDir dir;
    auto h = TraceBuilder::defaultHeader();
    h.command = "./app \x1b]0;title\x07\x1b[31mred\r\n::error::forged%0A";
    auto b = standardTrace(1, h);
    b.module({0x500000, 0x500000, 0x600000, "/usr/lib/lib\x1b[2Jx.so", ""});
    b.stack(7, {0x500100});
    b.event(Ev::alloc(10, B, 4096, Api::cudaMalloc, Kind::Device, 7));
    b.trailer(20);
    std::string trace = b.write(dir.file("t.gmtrace"));
    auto r = runCommand(cli("check --no-symbols --format github " + trace));
    INFO(r.out);
    CHECK(r.status == 1);
    std::vector<std::string> annotations;
    size_t start = 0;
    for (size_t end; (end = r.out.find('\n', start)) != std::string::npos; start = end + 1) {
        std::string line = r.out.substr(start, end - start);
        if (line.rfind("::", 0) == 0) {
            annotations.push_back(line);
        }
    }
    REQUIRE(annotations.size() == 1); // the trace's "::error::" stays inside the message
    const std::string& a = annotations[0];
    CHECK(std::none_of(a.begin(), a.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }));
    CHECK_THAT(a, Catch::Contains("\\x1b]0;title\\x07\\x1b[31mred%0D%0A::error::forged%250A"));
}
