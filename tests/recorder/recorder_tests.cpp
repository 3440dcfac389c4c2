// Integration tests of libgpumemtrace.so: small programs run on the simulated CUDA with
// the library preloaded; assertions are on `gpumemtrace dump` of the traces they leave.
#include "traced_run.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <tuple>

using namespace gmt::test;
using nlohmann::json;

namespace {

// Exactly one successful event of `op` with `size`, named `api`, of `kind`.
json expectOne(const DumpedTrace& t, const std::string& op, uint64_t size, const std::string& api,
               const std::string& kind) {
    auto found = t.find(op, size);
    INFO("op " << op << " size " << size << " api " << api);
    REQUIRE(found.size() == 1);
    CHECK(found[0]["api"] == api);
    CHECK(found[0]["kind"] == kind);
    CHECK(found[0]["result"] == 0);
    return found[0];
}

// The free that ends an allocation: the first free of its address after it (addresses are
// reused by later allocations).
json expectFreeOf(const DumpedTrace& t, const json& alloc, const std::string& api) {
    bool after = false;
    const json* found = nullptr;
    for (const json& e : t.events) {
        if (e == alloc) {
            after = true;
        } else if (after && e["event"] == "free" && e["address"] == alloc["address"]) {
            found = &e;
            break;
        }
    }
    INFO("free of " << alloc.dump() << " by " << api);
    REQUIRE(found);
    CHECK((*found)["api"] == api);
    CHECK((*found)["result"] == 0);
    return *found;
}

void checkRuntimeTrace(const DumpedTrace& t, const std::string& program) {
    CHECK(t.header["command"].get<std::string>().find(program) != std::string::npos);
    CHECK(!t.trailer.is_null());
    CHECK(!t.devices.empty());

    json leak = expectOne(t, "alloc", 1234567, "cudaMalloc", "device");
    CHECK(leak["device"] == 0);
    CHECK(t.stackPassesThrough(leak, program));
    CHECK(t.find("free", 1234567).empty());

    expectFreeOf(t, expectOne(t, "alloc", 11001, "cudaMalloc", "device"), "cudaFree");
    json pitch = expectOne(t, "alloc", 1001 * 7, "cudaMallocPitch", "device");
    CHECK(pitch["actual_size"].get<uint64_t>() == pitch["offset"].get<uint64_t>() * 7);
    expectFreeOf(t, pitch, "cudaFree");
    expectFreeOf(t, expectOne(t, "alloc", 1003 * 3 * 2, "cudaMalloc3D", "device"), "cudaFree");
    expectFreeOf(t, expectOne(t, "alloc", 12001, "cudaMallocAsync", "pool"), "cudaFreeAsync");
    json from_pool = expectOne(t, "alloc", 13001, "cudaMallocFromPoolAsync", "pool");
    CHECK(from_pool.contains("handle"));
    expectFreeOf(t, from_pool, "cudaFreeAsync");
    expectFreeOf(t, expectOne(t, "alloc", 14001, "cudaMallocManaged", "managed"), "cudaFree");
    json host = expectOne(t, "alloc", 15001, "cudaMallocHost", "host_pinned");
    CHECK(host["device"] == -1);
    expectFreeOf(t, host, "cudaFreeHost");
    expectFreeOf(t, expectOne(t, "alloc", 16001, "cudaHostAlloc", "host_pinned"), "cudaFreeHost");
    expectFreeOf(t, expectOne(t, "alloc", 17001, "cudaHostRegister", "host_pinned"),
                 "cudaHostUnregister");
    expectFreeOf(t, expectOne(t, "alloc", 19 * 11 * 4, "cudaMallocArray", "array"),
                 "cudaFreeArray");
    expectFreeOf(t, expectOne(t, "alloc", 5 * 7 * 3 * 4, "cudaMalloc3DArray", "array"),
                 "cudaFreeArray");
    expectFreeOf(t, expectOne(t, "alloc", (64 + 16) * 4, "cudaMallocMipmappedArray", "array"),
                 "cudaFreeMipmappedArray");

    auto failed = t.find("alloc", uint64_t{1} << 50);
    REQUIRE(failed.size() == 1);
    CHECK(failed[0]["api"] == "cudaMalloc");
    CHECK(failed[0]["result"] == 2); // cudaErrorMemoryAllocation
    CHECK(failed[0]["device_total"].get<uint64_t>() > 0);

    // Nested runtime -> driver calls are one event each, named for the runtime API; the
    // no-op cudaFree(NULL) is none.
    for (const json& e : t.events) {
        CHECK(e["api"].get<std::string>().rfind("cuda", 0) == 0);
        if ((e["event"] == "alloc" || e["event"] == "free") && e["result"] == 0) {
            CHECK(e["address"] != "0x0");
        }
    }
}

} // namespace

TEST_CASE("every runtime API through the exported symbols (shared cudart)", "[recorder]") {
    Run run = traced({kPrograms + "/runtime_calls"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    checkRuntimeTrace(only(run), "runtime_calls");
}

TEST_CASE("every runtime API of a static cudart, through cuGetProcAddress", "[recorder]") {
    Run run = traced({kPrograms + "/runtime_calls_static"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    DumpedTrace t = only(run);
    // A static cudart exports nothing: its calls reach the tracer as driver calls.
    json leak = expectOne(t, "alloc", 1234567, "cuMemAlloc_v2", "device");
    CHECK(t.stackPassesThrough(leak, "runtime_calls_static"));
    expectFreeOf(t, expectOne(t, "alloc", 11001, "cuMemAlloc_v2", "device"), "cuMemFree_v2");
    expectFreeOf(t, expectOne(t, "alloc", 12001, "cuMemAllocAsync", "pool"), "cuMemFreeAsync");
    expectFreeOf(t, expectOne(t, "alloc", 14001, "cuMemAllocManaged", "managed"), "cuMemFree_v2");
    expectFreeOf(t, expectOne(t, "alloc", 15001, "cuMemHostAlloc", "host_pinned"), "cuMemFreeHost");
    auto failed = t.find("alloc", uint64_t{1} << 50);
    REQUIRE(failed.size() == 1);
    CHECK(failed[0]["result"] == 2); // CUDA_ERROR_OUT_OF_MEMORY
}

TEST_CASE("driver functions from cudaGetDriverEntryPoint are wrapped", "[recorder]") {
    Run run = traced({kPrograms + "/runtime_calls", "entrypoint"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    DumpedTrace t = only(run);
    json a = expectOne(t, "alloc", 18001, "cuMemAlloc_v2", "device");
    CHECK(t.stackPassesThrough(a, "runtime_calls"));
    expectFreeOf(t, a, "cuMemFree_v2");
}

TEST_CASE("every driver API through each route", "[recorder]") {
    std::string route = GENERATE("exported", "dlsym", "procaddr");
    Run run = traced({kPrograms + "/driver_calls", route});
    INFO("route " << route << "\n" << run.result.err);
    REQUIRE(run.result.exit_code == 0);
    DumpedTrace t = only(run);
    json a = expectOne(t, "alloc", 21001, "cuMemAlloc_v2", "device");
    CHECK(t.stackPassesThrough(a, "driver_calls"));
    CHECK(a.contains("context"));
    expectFreeOf(t, a, "cuMemFree_v2");
    json pitch = expectOne(t, "alloc", 2001 * 5, "cuMemAllocPitch_v2", "device");
    CHECK(pitch["actual_size"].get<uint64_t>() >= 2001 * 5);
    expectFreeOf(t, pitch, "cuMemFree_v2");
    expectFreeOf(t, expectOne(t, "alloc", 22001, "cuMemAllocAsync", "pool"), "cuMemFreeAsync");
    expectFreeOf(t, expectOne(t, "alloc", 23001, "cuMemAllocManaged", "managed"), "cuMemFree_v2");
    expectFreeOf(t, expectOne(t, "alloc", 24001, "cuMemAllocHost_v2", "host_pinned"),
                 "cuMemFreeHost");
    expectFreeOf(t, expectOne(t, "alloc", 25001, "cuMemHostAlloc", "host_pinned"), "cuMemFreeHost");
    expectFreeOf(t, expectOne(t, "alloc", 26001, "cuMemHostRegister_v2", "host_pinned"),
                 "cuMemHostUnregister");
    expectFreeOf(t, expectOne(t, "alloc", 324, "cuArrayCreate_v2", "array"), "cuArrayDestroy");
    expectFreeOf(t, expectOne(t, "alloc", 540, "cuArray3DCreate_v2", "array"), "cuArrayDestroy");
    expectFreeOf(t, expectOne(t, "alloc", 28001, "cuMemAllocFromPoolAsync", "pool"),
                 "cuMemFreeAsync");

    uint64_t gran = 2u << 20;
    json reserve = expectOne(t, "vmm_reserve", 4 * gran, "cuMemAddressReserve", "vmm");
    json create = expectOne(t, "vmm_create", 2 * gran, "cuMemCreate", "vmm");
    json map = expectOne(t, "vmm_map", 2 * gran, "cuMemMap", "vmm");
    CHECK(map["address"] == reserve["address"]);
    CHECK(map["handle"] == create["handle"]);
    expectOne(t, "vmm_unmap", 2 * gran, "cuMemUnmap", "vmm");
    expectOne(t, "vmm_address_free", 4 * gran, "cuMemAddressFree", "vmm");
    json retain = expectOne(t, "vmm_retain", 0, "cuMemRetainAllocationHandle", "vmm");
    CHECK(retain["handle"] == create["handle"]);
    CHECK(retain["address"].get<std::string>() != map["address"].get<std::string>()); // inside
    json import = expectOne(t, "vmm_create", 0, "cuMemImportFromShareableHandle", "vmm");
    CHECK(import["imported"] == true);
    CHECK(import["device"] == 0); // asked of the driver at import
    CHECK(import.contains("handle"));
    int releases = 0, imported_releases = 0, pools = 0, ctx_creates = 0, teardowns = 0;
    for (const json& e : t.events) {
        releases += e["event"] == "vmm_release" && e["handle"] == create["handle"];
        imported_releases += e["event"] == "vmm_release" && e["handle"] == import["handle"];
        pools += e["event"] == "pool_create" || e["event"] == "pool_destroy";
        ctx_creates += e["event"] == "ctx_create";
        teardowns += e["event"] == "teardown";
    }
    CHECK(releases == 2); // the retained reference and the creation's
    CHECK(imported_releases == 1);
    CHECK(pools == 2);
    CHECK(ctx_creates == 1);
    CHECK(teardowns == 2); // cuCtxDestroy_v2 and cuDevicePrimaryCtxReset_v2
    expectOne(t, "alloc", 29001, "cuMemAlloc_v2", "device");
    expectOne(t, "alloc", 30001, "cuMemAlloc_v2", "device");
}

TEST_CASE("8 threads x 100000 pairs: nothing lost", "[recorder][threads]") {
    Run run = traced({kPrograms + "/threads", "8", "100000"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    DumpedTrace t = only(run);
    CHECK(t.events.size() == 1600000);
    REQUIRE(!t.trailer.is_null());
    CHECK(t.trailer["events"] == 1600000);
    CHECK(t.trailer["dropped_events"] == 0);
    std::set<uint64_t> tids;
    for (const json& e : t.events) {
        tids.insert(e["tid"].get<uint64_t>());
    }
    CHECK(tids.size() == 8);
}

TEST_CASE("drop mode counts what it drops", "[recorder][threads]") {
    Run run = traced({kPrograms + "/threads", "8", "20000"},
                     {{"GPUMEMTRACE_ON_FULL", "drop"}, {"GPUMEMTRACE_BUFFER_SIZE", "128K"}});
    REQUIRE(run.result.exit_code == 0);
    DumpedTrace t = only(run);
    REQUIRE(!t.trailer.is_null());
    uint64_t dropped = t.trailer["dropped_events"];
    // Every event is either in the trace or counted as dropped (stack records may also be
    // dropped, so the sum can exceed the number of calls only by those).
    CHECK(t.events.size() + dropped >= 320000);
    CHECK(t.events.size() <= 320000);
}

TEST_CASE("fork: the child writes its own trace, nothing twice", "[recorder][fork]") {
    Run run = traced({kPrograms + "/lifecycle", "fork"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    REQUIRE(run.traces.size() == 2);
    DumpedTrace a = dumpTrace(kCli, run.traces[0]);
    DumpedTrace b = dumpTrace(kCli, run.traces[1]);
    const DumpedTrace& parent = a.find("alloc", 33001).empty() ? b : a;
    const DumpedTrace& child = a.find("alloc", 33001).empty() ? a : b;
    CHECK(parent.find("alloc", 31001).size() == 1);
    CHECK(parent.find("alloc", 33001).size() == 1);
    CHECK(parent.find("alloc", 32001).empty());
    CHECK(child.find("alloc", 32001).size() == 1);
    CHECK(child.find("alloc", 31001).empty());
    CHECK(child.find("alloc", 33001).empty());
    CHECK(child.header["pid"] != parent.header["pid"]);
    CHECK(!child.trailer.is_null());
    CHECK(!parent.trailer.is_null());
    CHECK(child.stackPassesThrough(child.find("alloc", 32001)[0], "lifecycle"));
}

TEST_CASE("fork + exec: the new program is traced afresh", "[recorder][fork]") {
    Run run = traced({kPrograms + "/lifecycle", "fork-exec", kPrograms + "/lifecycle", "exit"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 3);
    REQUIRE(run.traces.size() == 2);
    DumpedTrace a = dumpTrace(kCli, run.traces[0]);
    DumpedTrace b = dumpTrace(kCli, run.traces[1]);
    const DumpedTrace& exec = a.find("alloc", 37001).empty() ? b : a;
    const DumpedTrace& parent = a.find("alloc", 37001).empty() ? a : b;
    CHECK(exec.events.size() == 1);
    CHECK(parent.find("alloc", 31001).size() == 1);
    CHECK(parent.find("alloc", 37001).empty());
}

TEST_CASE("SIGKILL: every call that returned is in the trace", "[recorder][durability]") {
    TempDir dir;
    Environment env = {{"LD_PRELOAD", GMT_BUILD_DIR "/lib/libgpumemtrace.so"},
                       {"LD_LIBRARY_PATH", GMT_BUILD_DIR "/lib/cudasim"},
                       {"GPUMEMTRACE_OUTPUT", dir.file("t.%p.gmtrace")}};
    ProcessResult r =
        runAndSignalAfter({kPrograms + "/lifecycle", "sigkill", "5000"}, env, "ready", SIGKILL);
    CHECK(r.term_signal == SIGKILL);
    auto traces = listFiles(dir.path(), ".gmtrace");
    REQUIRE(traces.size() == 1);
    DumpedTrace t = dumpTrace(kCli, traces[0]);
    CHECK(t.find("alloc", 34001).size() == 5000);
    CHECK(t.trailer.is_null());
}

TEST_CASE("a crash ends the trace and still dies of its signal", "[recorder][durability]") {
    auto [mode, sig, size] =
        GENERATE(std::make_tuple("segv", SIGSEGV, 35001), std::make_tuple("abort", SIGABRT, 36001));
    Run run = traced({kPrograms + "/lifecycle", mode});
    CHECK(run.result.term_signal == sig);
    DumpedTrace t = only(run);
    CHECK(t.find("alloc", size).size() == 1);
    REQUIRE(!t.trailer.is_null());
    CHECK(t.trailer.value("exit_signal", 0) == sig);
}

TEST_CASE("_exit keeps its status and completes the trace", "[recorder][durability]") {
    Run run = traced({kPrograms + "/lifecycle", "exit"});
    CHECK(run.result.exit_code == 3);
    DumpedTrace t = only(run);
    CHECK(t.find("alloc", 37001).size() == 1);
    CHECK(!t.trailer.is_null());
}

TEST_CASE("a program without CUDA leaves no trace and is undisturbed", "[recorder]") {
    Run run = traced({kPrograms + "/lifecycle", "nocuda"});
    CHECK(run.result.exit_code == 0);
    CHECK(run.result.out == "no CUDA here\n");
    CHECK(run.result.err.empty());
    CHECK(run.traces.empty());
}

TEST_CASE("trace files are private and never overwrite", "[recorder][file]") {
    TempDir dir;
    std::string target = dir.file("fixed.gmtrace");
    // An existing file and a symlink at the chosen name must both be left alone.
    std::filesystem::create_symlink("/dev/null", target);
    Environment env = {{"LD_PRELOAD", GMT_BUILD_DIR "/lib/libgpumemtrace.so"},
                       {"LD_LIBRARY_PATH", GMT_BUILD_DIR "/lib/cudasim"},
                       {"GPUMEMTRACE_OUTPUT", target}};
    ProcessResult r = runProcess({kPrograms + "/lifecycle", "exit"}, env);
    CHECK(r.exit_code == 3);
    CHECK(std::filesystem::is_symlink(target));
    CHECK(r.err.find("fixed.1.gmtrace") != std::string::npos); // the clash is logged
    std::string chosen = dir.file("fixed.1.gmtrace");
    REQUIRE(std::filesystem::exists(chosen));
    struct stat st;
    REQUIRE(stat(chosen.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(dumpTrace(kCli, chosen).find("alloc", 37001).size() == 1);
}

TEST_CASE("a long command line: a whole header, its start kept, the cut said",
          "[recorder][header]") {
    // `lifecycle exit` and `count` arguments of 40 letters (each 41 bytes with its space).
    auto run = [](size_t count) {
        std::vector<std::string> argv = {kPrograms + "/lifecycle", "exit"};
        argv.insert(argv.end(), count, std::string(40, 'x'));
        size_t bytes = argv[0].size() + 1 + argv[1].size() + count * 41;
        Run r = traced(argv);
        CHECK(r.result.exit_code == 3); // the program's own status
        CHECK(r.result.err.empty());
        return std::make_pair(only(r), bytes);
    };
    SECTION("over 8 KiB, under the bound: whole") {
        auto [t, bytes] = run(300);
        CHECK(t.header["pid"].get<uint64_t>() > 0);
        CHECK(t.header["command"].get<std::string>().size() == bytes);
        CHECK(t.header["command_bytes"] == bytes);
        CHECK(t.header["command_truncated"] == false);
        CHECK(t.find("alloc", 37001).size() == 1);
    }
    SECTION("over the bound: its first 16 KiB, and the whole length") {
        auto [t, bytes] = run(500);
        CHECK(t.header["pid"].get<uint64_t>() > 0);
        const std::string command = t.header["command"];
        CHECK(command.size() == 16 * 1024);
        CHECK(command.find(kPrograms + "/lifecycle exit xxx") == 0);
        CHECK(t.header["command_bytes"] == bytes);
        CHECK(t.header["command_truncated"] == true);
        CHECK(t.find("alloc", 37001).size() == 1);
    }
}

TEST_CASE("a trace that cannot be created: the program runs on, and the failure file says why",
          "[recorder][file]") {
    TempDir dir;
    const std::string failures = dir.file("failures");
    Environment env = {{"LD_PRELOAD", kPreload},
                       {"LD_LIBRARY_PATH", kCudaSim},
                       {"GPUMEMTRACE_OUTPUT", "/proc/gmt-none/%p.gmtrace"},
                       {"GPUMEMTRACE_FAILURE_FILE", failures}};
    ProcessResult r = runProcess({kPrograms + "/lifecycle", "exit"}, env);
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("cannot create trace file /proc/gmt-none/") != std::string::npos);
    std::ifstream in(failures);
    std::string line, more;
    REQUIRE(std::getline(in, line));
    CHECK_FALSE(std::getline(in, more)); // one line: one process
    // PID <TAB> PATH <TAB> REASON
    const size_t tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    CHECK(std::stoul(line.substr(0, tab)) > 0);
    CHECK(line.find("\t/proc/gmt-none/" + line.substr(0, tab) +
                    ".gmtrace\tcannot create "
                    "directory /proc/gmt-none: ") == tab);

    // A trace that is created says nothing there.
    env[2].second = dir.file("t.%p.gmtrace");
    CHECK(runProcess({kPrograms + "/lifecycle", "exit"}, env).exit_code == 3);
    CHECK(listFiles(dir.path(), ".gmtrace").size() == 1);
    std::ifstream again(failures);
    int lines = 0;
    for (std::string l; std::getline(again, l);) {
        ++lines;
    }
    CHECK(lines == 1);
}

TEST_CASE("GPUMEMTRACE_ENABLE=0 passes everything through", "[recorder]") {
    Run run = traced({kPrograms + "/runtime_calls"}, {{"GPUMEMTRACE_ENABLE", "0"}});
    CHECK(run.result.exit_code == 0);
    CHECK(run.traces.empty());
}

TEST_CASE("stack depth 0 records no stacks", "[recorder]") {
    Run run = traced({kPrograms + "/lifecycle", "exit"}, {{"GPUMEMTRACE_STACK_DEPTH", "0"}});
    DumpedTrace t = only(run);
    CHECK(t.stacks.empty());
    REQUIRE(t.events.size() == 1);
    CHECK(t.events[0]["stack"] == 0);
}

TEST_CASE("a program without CPython says so in its header and trailer", "[recorder]") {
    DumpedTrace t = only(traced({kPrograms + "/lifecycle", "exit"}));
    CHECK(t.header["python_status"] == "not_detected");
    CHECK(t.header["python_version"] == "");
    CHECK(t.trailer["python_status"] == "not_detected");
}

TEST_CASE("dlsym(RTLD_NEXT) still resolves relative to the real caller", "[recorder]") {
    Run run = traced({kPrograms + "/rtld_next"});
    INFO(run.result.err);
    CHECK(run.result.exit_code == 0);
}

TEST_CASE("the context and device recorded follow every switch", "[recorder][context]") {
    Run run = traced({kPrograms + "/context_switch"});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    DumpedTrace t = only(run);
    std::istringstream lines(run.result.out);
    std::string line;
    int compared = 0;
    while (std::getline(lines, line)) {
        json seen = json::parse(line);
        auto found = t.find("alloc", seen["size"].get<uint64_t>());
        INFO(line);
        REQUIRE(found.size() == 1);
        CHECK(found[0]["context"] == seen["context"]);
        CHECK(found[0]["device"] == seen["device"]);
        ++compared;
    }
    CHECK(compared >= 10);
}

TEST_CASE("event times are CLOCK_MONOTONIC, in order, within the trace's start and end",
          "[recorder][clock]") {
    // Long enough for the writer thread to refit the event clock many times (every 10 ms).
    Run run =
        traced({kPrograms + "/lifecycle", "pairs", "300000"}, {{"GPUMEMTRACE_STACK_DEPTH", "0"}});
    REQUIRE(run.result.exit_code == 0);
    DumpedTrace t = only(run);
    REQUIRE(t.events.size() == 600000);
    const uint64_t start = t.header["start_mono_ns"];
    const uint64_t end = t.trailer["end_mono_ns"];
    uint64_t prev = start;
    size_t backwards = 0;
    for (const json& e : t.events) {
        const uint64_t time = e["time_ns"];
        backwards += time < prev;
        prev = time;
    }
    CHECK(backwards == 0);
    CHECK(prev <= end);
}
