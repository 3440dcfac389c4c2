// The traced program never dies, and never changes what it prints or how it ends, because
// the trace cannot be written: a file system too small for the ring, one that fills up
// while the program runs, and a file size limit (RLIMIT_FSIZE, whose excess would raise
// SIGXFSZ). The trace, when there is one, says what happened and accounts for every call.
#include "traced_run.h"

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/mount.h>

using namespace gmt::test;
using nlohmann::json;

namespace {

// A tmpfs of `size` mounted on a fresh folder for the object's life. Mounting needs
// privileges (the tests run as root here and in CI); without them there is nothing to
// test with, which mounted() says.
class SmallFileSystem {
  public:
    explicit SmallFileSystem(const std::string& size) {
        const std::string options = "size=" + size + ",mode=0700";
        if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) ==
            0) {
            mounted_ = true;
        } else {
            why_ = std::strerror(errno);
        }
    }
    ~SmallFileSystem() {
        if (mounted_) {
            ::umount2(dir_.path().c_str(), MNT_DETACH);
        }
    }
    SmallFileSystem(const SmallFileSystem&) = delete;
    SmallFileSystem& operator=(const SmallFileSystem&) = delete;

    bool mounted() const { return mounted_; }
    const std::string& why() const { return why_; }
    std::string path() const { return dir_.path(); }

  private:
    TempDir dir_;
    bool mounted_ = false;
    std::string why_;
};

const std::vector<std::string> kPairs = {kPrograms + "/lifecycle", "pairs", "200000"};
constexpr uint64_t kPairEvents = 400000;

// What the program does untraced: the reference for output and exit status.
ProcessResult untraced(const std::vector<std::string>& argv) {
    return runProcess(argv, {{"LD_LIBRARY_PATH", kCudaSim}});
}

// Every call of the run is in the trace (log or ring) or counted as dropped.
void checkAccountsForEveryCall(const std::string& trace) {
    DumpedTrace t = dumpTrace(kCli, trace);
    INFO(t.error);
    CHECK(t.exit_code == 1); // incomplete: the log stopped
    CHECK(t.header["log_failed"] == true);
    CHECK(t.trailer.is_null());
    const uint64_t dropped = t.header["prologue_dropped_events"];
    CHECK(dropped > 0);
    CHECK(t.events.size() + dropped == kPairEvents);

    ProcessResult report = runProcess({kCli, "report", "--format", "json", "--no-symbols", trace});
    INFO(report.err);
    REQUIRE(report.exit_code == 0);
    json r = json::parse(report.out);
    json process = r["processes"][0];
    CHECK(process["log_failed"] == true);
    CHECK(process["incomplete_reason"].get<std::string>().find("could not write") !=
          std::string::npos);
    CHECK(process["dropped_events"] == dropped);
    // The lost calls are reported as missing, and nothing they could explain is stated as
    // fact: no certain error, every leaked byte uncertain (its free may be among them).
    CHECK(process["missing_events"]["dropped_events"] == dropped);
    CHECK(r["summary"]["uncertain_errors"] == r["summary"]["errors"]);
    CHECK(r["summary"]["uncertain_leaked_bytes"] == r["summary"]["leaked_bytes"]);
    for (const json& e : r["errors"]) {
        CHECK(e["uncertain"] == true);
    }
    // The verdict as JUnit: one line per failure, whatever width a terminal would have.
    TempDir out; // not beside the trace: that file system may be full
    const std::string junit = out.file("check.xml");
    ProcessResult check = runProcess({kCli, "check", "--no-symbols", "--junit", junit, trace});
    INFO(check.out);
    CHECK(check.exit_code == 1);
    std::ifstream in(junit);
    const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(xml.find("events missing (" + std::to_string(dropped) + " events dropped") !=
          std::string::npos);
}

// Runs the pairs program traced into `dir` (extra arguments before it: a wrapper such as
// prlimit) and checks that its output and exit status are those of the untraced run.
ProcessResult runUndisturbed(const std::string& dir, std::vector<std::string> wrapper = {}) {
    ProcessResult expected = untraced(kPairs);
    Environment env = tracingEnvironment(dir);
    env.emplace_back("GPUMEMTRACE_STACK_DEPTH", "0"); // no stack records: events are all
    wrapper.insert(wrapper.end(), kPairs.begin(), kPairs.end());
    ProcessResult r = runProcess(wrapper, env);
    INFO(r.err);
    CHECK(r.exited);
    CHECK(r.term_signal == 0);
    CHECK(r.exit_code == expected.exit_code);
    CHECK(r.out == expected.out);
    return r;
}

} // namespace

TEST_CASE("a file system too small for the ring: the program runs untraced, undisturbed",
          "[recorder][file]") {
    SmallFileSystem fs("600k");
    if (!fs.mounted()) {
        WARN("cannot mount a small tmpfs here (" << fs.why() << "): not tested");
        return;
    }
    ProcessResult r = runUndisturbed(fs.path());
    CHECK(r.err.find("cannot reserve") != std::string::npos);
    CHECK(listFiles(fs.path(), ".gmtrace").empty());
}

TEST_CASE("a file system that fills up: tracing stops, the program does not notice",
          "[recorder][file]") {
    // Room for the prologue and the 1 MiB ring, and some 70 KiB of log: the log of 400 000
    // events needs about 2.4 MB.
    SmallFileSystem fs("1100k");
    if (!fs.mounted()) {
        WARN("cannot mount a small tmpfs here (" << fs.why() << "): not tested");
        return;
    }
    runUndisturbed(fs.path());
    auto traces = listFiles(fs.path(), ".gmtrace");
    REQUIRE(traces.size() == 1);
    checkAccountsForEveryCall(traces[0]);
}

TEST_CASE("a file size limit: no SIGXFSZ, the program runs on", "[recorder][file]") {
    for (const char* limit : {"600000", "1100000"}) {
        TempDir dir;
        INFO("RLIMIT_FSIZE " << limit);
        ProcessResult r =
            runUndisturbed(dir.path(), {"/usr/bin/prlimit", std::string("--fsize=") + limit});
        auto traces = listFiles(dir.path(), ".gmtrace");
        if (std::string(limit) == "600000") {
            CHECK(traces.empty()); // the ring alone exceeds the limit
            CHECK(r.err.find("cannot reserve") != std::string::npos);
        } else {
            REQUIRE(traces.size() == 1);
            checkAccountsForEveryCall(traces[0]);
        }
    }
}
