// Symbolization through the report: a stack into this very test binary comes out with
// the function's name (DWARF build) or as module + offset (fallback, --no-symbols).
#include "report_fixture.h"
#include "support/run_command.h"
#include "symbols/symbolizer.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <elf.h>
#include <link.h>
#include <unistd.h>

using namespace gmt;
using namespace gmt::test;

extern "C" __attribute__((noinline)) int gmt_test_leak_here(int x) {
    asm volatile("" ::: "memory");
    return x * 3 + 1;
}

namespace {

format::ModuleInfo selfModule() {
    format::ModuleInfo m;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
            auto* mod = static_cast<format::ModuleInfo*>(out);
            mod->base = info->dlpi_addr;
            mod->start = UINT64_MAX;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD) {
                    mod->start = std::min<uint64_t>(mod->start, info->dlpi_addr + ph.p_vaddr);
                    mod->end =
                        std::max<uint64_t>(mod->end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
                }
            }
            return 1; // the first object is the executable
        },
        &m);
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    m.path.assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
    return m;
}

} // namespace

TEST_CASE("stacks are symbolized against the modules of the trace") {
    REQUIRE(gmt_test_leak_here(1) == 4);
    const format::ModuleInfo self = selfModule();
    const uint64_t address = reinterpret_cast<uint64_t>(&gmt_test_leak_here) + 2;
    TraceBuilder b;
    b.header().device().module(self).stack(1, {address});
    b.event(Ev::alloc(1, 0x7f0000000000, 1234567));
    b.trailer(2);
    TempDir dir;
    auto path = b.write(dir.file("t.gmtrace"));

    analyzer::ReportOptions o;
    o.symbols = false;
    auto plain = reportOf({path}, o);
    const auto& f0 = plain.leaks[0].stack[0];
    CHECK(f0.module == self.path);
    CHECK(f0.function == "");
    CHECK(f0.offset == address - self.base);

    o.symbols = true;
    auto symbolized = reportOf({path}, o);
    const auto& f1 = symbolized.leaks[0].stack.back();
    if (analyzer::dwarfSymbolizerAvailable()) {
        CHECK_THAT(f1.function, Catch::Contains("gmt_test_leak_here"));
        CHECK_THAT(f1.file, Catch::EndsWith("symbols_test.cpp"));
        CHECK(f1.line > 0);
    } else {
        CHECK(f1.function == "");
    }
}

TEST_CASE("a job of many traces keeps its names under a low descriptor limit") {
    if (!analyzer::dwarfSymbolizerAvailable()) {
        WARN("built without the DWARF symbolizer: nothing to check");
        return;
    }
    REQUIRE(gmt_test_leak_here(1) == 4);
    // 200 processes of one job, each with this test binary loaded (at its own address
    // when it is position-independent) and a leak from gmt_test_leak_here. Their modules
    // are one object: symbolized in one shared session, not one per process, so 64
    // descriptors are plenty, and no name may be lost.
    const format::ModuleInfo self = selfModule();
    const uint64_t address = reinterpret_cast<uint64_t>(&gmt_test_leak_here) + 2;
    constexpr int kProcesses = 200;
    TempDir dir;
    for (int i = 0; i < kProcesses; ++i) {
        const uint64_t shift = self.base != 0 ? uint64_t(i) << 32 : 0;
        format::ModuleInfo module = self;
        module.base += shift;
        module.start += shift;
        module.end += shift;
        auto header = TraceBuilder::defaultHeader();
        header.pid = 1000 + i;
        TraceBuilder b;
        b.header(header).device().module(module).stack(1, {address + shift});
        b.event(Ev::alloc(1, 0x7f0000000000, 4096));
        b.trailer(2);
        b.write(dir.file("rank" + std::to_string(i) + ".gmtrace"));
    }
    const CommandResult r = runCommand("ulimit -n 64 && " + std::string(GMT_CLI) + " report " +
                                       dir.path() + " --format json --top 1000");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.find("warning") == std::string::npos);
    const nlohmann::json report = nlohmann::json::parse(r.out);
    REQUIRE(report["leaks"].size() == kProcesses);
    for (const auto& leak : report["leaks"]) {
        CHECK_THAT(leak["stack"].back()["function"].get<std::string>(),
                   Catch::Contains("gmt_test_leak_here"));
    }
}
