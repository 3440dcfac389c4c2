// The lifetime observer export streams from: every counted allocation begins once and ends
// once, told how and by which event, in the order the analysis applies the events.
#include "analysis/lifetimes.h"
#include "analysis/live_accounting.h"

#include <support/trace_builder.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace gmt;
using analyzer::LifetimeEnd;
using format::Api;
using format::Kind;
using format::Op;
using gmt::test::Ev;

namespace {

struct Recorder : analyzer::LifetimeObserver {
    std::vector<std::string> seen;
    void began(const analyzer::LifetimeInfo& l, const format::Event& e) override {
        seen.push_back("begin " + std::to_string(l.address) + " " + std::to_string(l.charge.bytes) +
                       (l.charge.resident ? "" : " host") + " @" + std::to_string(e.time_ns));
    }
    void ended(const analyzer::LifetimeInfo& l, uint64_t time_ns, LifetimeEnd how,
               const format::Event* cause) override {
        seen.push_back("end " + std::to_string(l.address) + " " +
                       std::string(analyzer::lifetimeEndName(how)) + " @" +
                       std::to_string(time_ns) +
                       (cause ? " by " + std::to_string(cause->stack_id) : ""));
    }
    void freeError(uint32_t process, const analyzer::FreeError& e) override {
        seen.push_back("error " + std::string(analyzer::errorTypeName(e.type)) + " " +
                       std::to_string(e.address) + " in " + std::to_string(process));
    }
};

} // namespace

TEST_CASE("the lifetime observer sees every counted allocation begin and end once") {
    analyzer::LiveAccounting accounting(100);
    analyzer::Lifetimes lifetimes(0, accounting);
    Recorder r;
    lifetimes.setObserver(&r);
    auto reset = Ev::op(60, Op::Teardown, Api::cudaDeviceReset, 0, 0, 0, 9, 1);
    reset.kind = Kind::None;
    for (const format::Event& e : {
             Ev::alloc(10, 1000, 100),                                     // freed
             Ev::free(20, 1000, Api::cudaFree, Kind::Device, 7),           //
             Ev::free(25, 1000, Api::cudaFree, Kind::Device, 8),           // double free
             Ev::alloc(30, 2000, 500),                                     // replaced...
             Ev::alloc(40, 2100, 50),                                      // ...by this one
             Ev::alloc(50, 5000, 64, Api::cudaMalloc, Kind::Device, 1, 1), // reset
             reset,
             Ev::alloc(70, 9000, 32, Api::cudaMallocHost, Kind::HostPinned, 1, -1),
             Ev::op(80, Op::VmmCreate, Api::cuMemCreate, 0, 4096, 77),
             Ev::op(81, Op::VmmMap, Api::cuMemMap, 0x10000, 4096, 77),
             Ev::op(82, Op::VmmRelease, Api::cuMemRelease, 0, 0, 77), // still mapped
             Ev::op(83, Op::VmmUnmap, Api::cuMemUnmap, 0x10000, 4096, 0, 6),
         }) {
        lifetimes.onEvent(e);
    }
    lifetimes.releaseAll(100);
    CHECK(r.seen == std::vector<std::string>{
                        "begin 1000 100 @10",
                        "end 1000 freed @20 by 7",
                        "error double_free 1000 in 0",
                        "begin 2000 500 @30",
                        "end 2000 replaced @40 by 1",
                        "begin 2100 50 @40",
                        "begin 5000 64 @50",
                        "end 5000 teardown @60 by 9",
                        "begin 9000 32 host @70",
                        "begin 77 4096 @80",
                        "end 77 freed @83 by 6",
                        "end 2100 process_end @100",
                        "end 9000 process_end @100",
                    });
}

TEST_CASE("an array made at a live array's handle replaces it, as a pointer does") {
    analyzer::LiveAccounting accounting(100);
    analyzer::Lifetimes lifetimes(0, accounting);
    Recorder r;
    lifetimes.setObserver(&r);
    for (const format::Event& e : {
             Ev::alloc(10, 0xa0, 4096, Api::cudaMallocArray, Kind::Array, 1),
             Ev::alloc(20, 0xa0, 1024, Api::cudaMallocArray, Kind::Array, 2), // its free unseen
             Ev::alloc(30, 0x1000, 512),                                      // over nothing
         }) {
        lifetimes.onEvent(e);
    }
    CHECK(r.seen == std::vector<std::string>{
                        "begin 160 4096 @10",
                        "end 160 replaced @20 by 2",
                        "begin 160 1024 @20",
                        "begin 4096 512 @30",
                    });
    CHECK(lifetimes.counters().implicit_ends == 1);
    CHECK(lifetimes.arrays().size() == 1);
    CHECK(lifetimes.liveDeviceBytes(0) == 1024 + 512);
    CHECK(accounting.liveBytes() == 1024 + 512);
    CHECK(accounting.peak().bytes == 4096);
}
