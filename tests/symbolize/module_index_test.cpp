#include "symbols/module_index.h"

#include <catch2/catch.hpp>

using gmt::analyzer::ModuleIndex;
using gmt::format::ModuleInfo;

namespace {
ModuleInfo module(uint64_t start, uint64_t end, std::string path) {
    ModuleInfo info;
    info.base = info.start = start;
    info.end = end;
    info.path = std::move(path);
    return info;
}
} // namespace

TEST_CASE("module lookup is half-open and latest wins", "[symbolize][module_index]") {
    ModuleIndex index;
    auto a = index.add(module(0x1000, 0x2000, "a"));
    auto b = index.add(module(0x3000, 0x4000, "b"));
    REQUIRE(a);
    REQUIRE(b);
    CHECK(index.find(0x0fff) == std::nullopt);
    CHECK(index.find(0x1000) == a->id);
    CHECK(index.find(0x1fff) == a->id);
    CHECK(index.find(0x2000) == std::nullopt);
    CHECK(index.find(0x3800) == b->id);

    SECTION("the same module again keeps its id") {
        auto again = index.add(module(0x1000, 0x2000, "a"));
        REQUIRE(again);
        CHECK_FALSE(again->is_new);
        CHECK(again->id == a->id);
    }
    SECTION("a module over reused addresses replaces every one it overlaps") {
        auto c = index.add(module(0x1800, 0x3800, "c"));
        REQUIRE(c);
        CHECK(c->is_new);
        CHECK(index.find(0x1000) == std::nullopt);
        CHECK(index.find(0x1800) == c->id);
        CHECK(index.find(0x3000) == c->id);
        CHECK(index.find(0x3900) == std::nullopt);
        CHECK(index.module(a->id).path == "a"); // ids stay valid
    }
    SECTION("empty ranges cover nothing") {
        CHECK_FALSE(index.add(module(0x5000, 0x5000, "empty")));
    }
}
