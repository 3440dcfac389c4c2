// Out of memory on the analyzer's helper threads (decode_pool.h's workers, the accounting's
// thread: accounting_thread.h), made to happen at every allocation in turn. An exception
// leaving a thread ends the process (std::terminate), so each helper must keep its failure
// to hand it to the thread that reads, or leave the work to it: the reading ends with
// std::bad_alloc (one line and exit 2 in the CLI) or with exactly the result it has when
// memory suffices, never with an abort or a hang.
//
// Its own executable: the global operator new fails on request (failing_allocations.h), which
// no other test binary should carry.
#include "analysis/live_accounting.h"
#include "failing_allocations.h"
#include "read/decode_pool.h"
#include "read/trace_reader.h"
#include "report/report_json.h"
#include "report_fixture.h"

#include <catch2/catch.hpp>

#include <new>
#include <optional>

using namespace gmt;
using namespace gmt::test;
using gmt::analyzer::LiveAccounting;

namespace {

std::string writeTrace(TempDir& dir, size_t allocations) {
    auto b = standardTrace();
    for (size_t i = 0; i < allocations; ++i) {
        b.event(Ev::alloc(10 + 2 * i, 0x7f0000000000 + i * 4096, 4096 + i % 7 * 512,
                          format::Api::cudaMalloc, format::Kind::Device,
                          static_cast<uint32_t>(1 + i % 3)));
        if (i % 3 == 0) {
            b.event(Ev::free(11 + 2 * i, 0x7f0000000000 + i * 4096));
        }
        if (i % 500 == 499) {
            b.endFrame();
        }
    }
    b.trailer(10 + 2 * allocations);
    return b.write(dir.file("t.gmtrace"));
}

// Every event as read, or the failure.
struct Outcome {
    std::vector<uint64_t> times;
    bool out_of_memory = false;
};

// Into `o`, whose list is reserved beforehand: the test's own thread allocates nothing of
// its own while memory is short.
void readEvents(const std::string& path, analyzer::DecodePool& pool, Outcome& o) {
    try {
        analyzer::TraceReader reader(path, analyzer::TraceReader::kMinReadAhead, pool);
        analyzer::Record r;
        while (reader.next(r)) {
            if (r.tag == format::RecordTag::Event) {
                o.times.push_back(r.event.time_ns);
            }
        }
    } catch (const std::bad_alloc&) {
        o.out_of_memory = true;
    }
}

} // namespace

TEST_CASE("decoding ahead: workers out of memory - the reader reads on or reports it") {
    TempDir dir;
    const std::string path = writeTrace(dir, 60'000);
    analyzer::DecodePool reference_pool(0, analyzer::DecodePool::kSharedBudget);
    Outcome reference;
    readEvents(path, reference_pool, reference);
    REQUIRE_FALSE(reference.out_of_memory);
    long failed = 0;
    for (Failing where : {Failing::OtherThreads, Failing::AllThreads}) {
        for (size_t workers : {1, 3}) {
            for (long allowed : kFirstFailures) {
                INFO((where == Failing::AllThreads ? "every thread" : "the workers")
                     << " out of memory after " << allowed << " allocations, " << workers
                     << " workers");
                analyzer::DecodePool pool(workers, analyzer::DecodePool::kSharedBudget);
                Outcome got;
                got.times.reserve(reference.times.size());
                g_failed_allocations = 0;
                {
                    Exhausted exhausted(where, allowed);
                    readEvents(path, pool, got);
                }
                failed += g_failed_allocations;
                if (!got.out_of_memory) {
                    CHECK(got.times == reference.times);
                }
                if (where == Failing::AllThreads && allowed == 0) {
                    CHECK(got.out_of_memory); // the reader's own first allocation failed
                }
                CHECK(pool.usage().held == 0); // every batch given back
            }
        }
    }
    CHECK(failed > 0); // the workers did meet the failures
}

TEST_CASE("accounting thread: out of memory there is rethrown where it stops, never an abort") {
    // Many sites: the thread's tables grow all along.
    auto run = [](LiveAccounting& a) {
        analyzer::Charge c;
        c.kind = format::Kind::Device;
        for (uint64_t t = 1; t <= 50'000; ++t) {
            c.stack = static_cast<uint32_t>(t % 5000);
            c.bytes = t % 4096 + 1;
            a.add(c, t);
        }
    };
    LiveAccounting reference(100);
    run(reference);
    long failed = 0;
    for (long allowed : kFirstFailures) {
        INFO("the accounting's thread out of memory after " << allowed << " allocations");
        LiveAccounting a(100);
        a.startThread();
        g_failed_allocations = 0;
        bool out_of_memory = false;
        {
            Exhausted exhausted(Failing::OtherThreads, allowed);
            run(a);
            try {
                a.stopThread();
            } catch (const std::bad_alloc&) {
                out_of_memory = true;
            }
        }
        // The only other thread is the accounting's: it failed exactly when it was told to.
        CHECK(out_of_memory == (g_failed_allocations > 0));
        failed += g_failed_allocations;
        if (!out_of_memory) {
            CHECK(a.liveBytes() == reference.liveBytes());
            CHECK(a.peak().time_ns == reference.peak().time_ns);
            CHECK(a.peakSites().size() == reference.peakSites().size());
        }
    }
    CHECK(failed > 0);
}

TEST_CASE("accounting thread: no thread to be had - the accounting stays in place") {
    for (long allowed : {0, 1, 2, 3, 4, 5}) {
        INFO("out of memory after " << allowed << " allocations of this thread");
        LiveAccounting a(100);
        bool threw = false;
        {
            Exhausted exhausted(Failing::TestThread, allowed); // Catch's checks allocate
            try {
                a.startThread();
            } catch (...) {
                threw = true;
            }
        }
        CHECK_FALSE(threw);
        analyzer::Charge c;
        c.kind = format::Kind::Device;
        c.bytes = 100;
        for (uint64_t t = 1; t <= 1000; ++t) {
            a.add(c, t);
        }
        a.stopThread();
        CHECK(a.liveBytes() == 100'000);
        CHECK(a.peak().bytes == 100'000);
    }
}

TEST_CASE("a whole analysis with its helper threads out of memory: the report or bad_alloc") {
    // The shared pool's workers (no other test of this binary starts them) and the
    // accounting's thread both run, whatever the cores.
    ::setenv("GPUMEMTRACE_DECODE_THREADS", "3", 1);
    ::setenv("GPUMEMTRACE_ACCOUNTING_THREAD", "1", 1);
    REQUIRE(analyzer::DecodePool::shared().workers() == 3);
    TempDir dir;
    const std::string path = writeTrace(dir, 30'000);
    analyzer::ReportOptions options;
    options.symbols = false;
    const std::string reference = toJson(reportOf({path}, options)).dump();
    long failed = 0;
    for (long allowed : kFirstFailures) {
        INFO("helper threads out of memory after " << allowed << " allocations");
        g_failed_allocations = 0;
        bool out_of_memory = false;
        std::optional<analyzer::Report> got;
        {
            Exhausted exhausted(Failing::OtherThreads, allowed);
            try {
                got = reportOf({path}, options);
            } catch (const std::bad_alloc&) {
                out_of_memory = true;
            }
        }
        failed += g_failed_allocations;
        if (!out_of_memory) {
            CHECK(toJson(*got).dump() == reference);
        }
    }
    CHECK(failed > 0);
}
