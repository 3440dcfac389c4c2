// How a traced process can end while it is busy: exit() from one thread while others are
// inside CUDA calls, and execve after CUDA was used (replacing the image, or failing to).
// Each must leave complete, exact traces.
#include "traced_run.h"

#include <catch2/catch.hpp>

#include <map>

using namespace gmt::test;
using nlohmann::json;

namespace {

// Replays the events: every free must end a live allocation at its address and no
// allocation may land on a live one (the order of a free before the reuse of its address).
// Returns the allocations live at the end.
size_t replayExactly(const DumpedTrace& t) {
    std::map<std::string, json> live;
    for (const json& e : t.events) {
        if (e["result"] != 0) {
            continue;
        }
        const std::string address = e["address"];
        if (e["event"] == "alloc") {
            INFO("allocation at a live address: " << e.dump());
            REQUIRE(live.count(address) == 0);
            live[address] = e;
        } else if (e["event"] == "free") {
            INFO("free of an address not allocated: " << e.dump());
            REQUIRE(live.erase(address) == 1);
        }
    }
    return live.size();
}

} // namespace

TEST_CASE("exit() while other threads are inside CUDA calls: a complete, exact trace",
          "[recorder][lifecycle]") {
    // The race is decided anew in every run; 20 runs make a loss all but certain before
    // the recorder sealed its ring at the end.
    constexpr int kWorkers = 4;
    for (int i = 0; i < 20; ++i) {
        Run run = traced({kPrograms + "/exit_race", std::to_string(kWorkers), "2000"});
        INFO("run " << i << ": " << run.result.err);
        REQUIRE(run.result.exit_code == 0);
        CHECK(run.result.out == "exiting\n");
        DumpedTrace t = only(run); // complete: nothing after the trailer
        CHECK(t.last_record == "trailer");
        CHECK(t.trailers == 1);
        CHECK(t.trailer["events"] == t.events.size());
        CHECK(t.events.size() >= 2 * kWorkers * 2000);
        // At most the allocation each worker held when the process ended.
        CHECK(replayExactly(t) <= kWorkers);
        ProcessResult check =
            runProcess({kCli, "check", "--no-symbols", "--max-leaks", std::to_string(kWorkers),
                        "--max-leaked-bytes", "1M", run.traces[0]});
        INFO(check.out << check.err);
        CHECK(check.exit_code == 0);
    }
}

TEST_CASE("execve after CUDA: the old image's trace is complete", "[recorder][lifecycle]") {
    Run run = traced({kPrograms + "/lifecycle", "exec", kPrograms + "/lifecycle", "nocuda"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    CHECK(run.result.out == "no CUDA here\n");
    DumpedTrace t = only(run);
    CHECK(t.last_record == "trailer");
    CHECK(t.find("alloc", 38001).size() == 1);
    CHECK(t.events.size() == 2);
    CHECK(t.trailer["events"] == 2);
}

TEST_CASE("execve into a program that uses CUDA: two complete traces", "[recorder][lifecycle]") {
    Run run = traced({kPrograms + "/lifecycle", "exec", kPrograms + "/lifecycle", "exit"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 3);
    REQUIRE(run.traces.size() == 2); // the same pid: the second takes a numbered name
    for (const std::string& path : run.traces) {
        DumpedTrace t = dumpTrace(kCli, path);
        INFO(path << ": " << t.error);
        CHECK(t.exit_code == 0);
        CHECK(t.last_record == "trailer");
        CHECK(t.find("alloc", 38001).size() + t.find("alloc", 37001).size() == 1);
    }
}

TEST_CASE("execle: the arguments and the environment reach the new program",
          "[recorder][lifecycle]") {
    Run run = traced({kPrograms + "/lifecycle", "execle", kPrograms + "/lifecycle", "exit"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 3); // the new image ran "exit", traced through LD_PRELOAD
    REQUIRE(run.traces.size() == 2);
    for (const std::string& path : run.traces) {
        DumpedTrace t = dumpTrace(kCli, path);
        CHECK(t.exit_code == 0);
        CHECK(t.last_record == "trailer");
    }
}

TEST_CASE("execve that fails: the trace goes on and ends complete", "[recorder][lifecycle]") {
    Run run = traced({kPrograms + "/lifecycle", "exec-fail"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    CHECK(run.result.out == "exec failed, went on\n");
    DumpedTrace t = only(run);
    CHECK(t.find("alloc", 38001).size() == 1);
    CHECK(t.find("alloc", 38002).size() == 1);
    // The end written before the attempt, then the real one.
    CHECK(t.trailers == 2);
    CHECK(t.last_record == "trailer");
    CHECK(t.trailer["events"] == 4);
    CHECK(replayExactly(t) == 0);
}
