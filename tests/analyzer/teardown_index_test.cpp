// The teardown index against the rule it replaces: a random history of allocations,
// frees, context creations, context destroys and device resets, where after every event
// the live set Lifetimes keeps must equal that of a model applying docs/analysis.md's
// teardown rule by walking every live allocation (what Lifetimes did before the index).
#include "analysis/lifetimes.h"
#include "support/trace_builder.h"

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace gmt;
using namespace gmt::analyzer;
using format::Api;
using format::Event;
using format::Kind;
using format::Op;

namespace {

struct Held {
    uint64_t context = 0;
    int device = -1;
    Kind kind = Kind::None;
    auto operator<=>(const Held&) const = default;
};

// The rule, applied by a walk over everything live.
class Model {
  public:
    std::map<uint64_t, Held> pointers, arrays;

    void alloc(const Event& e) {
        if (e.context != 0 && e.device >= 0 && !user_.contains(e.context)) {
            primary_device_[e.context] = e.device;
        }
        (e.kind == Kind::Array ? arrays : pointers)[e.address] = {e.context, e.device, e.kind};
    }
    void free(uint64_t address, bool array_call) {
        auto& first = array_call ? arrays : pointers;
        auto& second = array_call ? pointers : arrays;
        if (!first.erase(address)) {
            second.erase(address);
        }
    }
    void ctxCreate(uint64_t context) {
        user_.insert(context);
        primary_device_.erase(context);
    }
    void teardown(const Event& e) {
        auto owned = [&](const Held& a) {
            if (a.kind == Kind::Pool || a.kind == Kind::Vmm) {
                return false;
            }
            if (e.context != 0) {
                return a.context == e.context;
            }
            if (e.device < 0 || user_.contains(a.context)) {
                return false;
            }
            if (a.device == e.device) {
                return true;
            }
            auto p = primary_device_.find(a.context);
            return a.device < 0 && a.context != 0 && p != primary_device_.end() &&
                   p->second == e.device;
        };
        std::erase_if(pointers, [&](const auto& kv) { return owned(kv.second); });
        std::erase_if(arrays, [&](const auto& kv) { return owned(kv.second); });
        if (e.context != 0) {
            user_.erase(e.context);
        }
    }

  private:
    std::set<uint64_t> user_;
    std::map<uint64_t, int> primary_device_;
};

std::map<uint64_t, Held> heldOf(const auto& container) {
    std::map<uint64_t, Held> out;
    for (const auto& [address, a] : container) {
        out[address] = {a.context, a.device, a.kind};
    }
    return out;
}

Event event(uint64_t t, Op op, Api api, Kind kind, uint64_t address, uint64_t context,
            int16_t device) {
    Event e = gmt::test::Ev::make(t, op, api, kind, address, 4096, 1, device);
    e.context = context;
    return e;
}

} // namespace

TEST_CASE("teardowns end exactly what walking the live set would", "[teardown]") {
    const uint64_t contexts[] = {0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5};
    const int16_t devices[] = {-1, 0, 1, 2};
    const Kind kinds[] = {Kind::Device, Kind::Managed, Kind::HostPinned, Kind::Array, Kind::Pool};
    for (uint64_t seed = 1; seed <= 40; ++seed) {
        std::mt19937_64 rng(seed);
        auto pick = [&](const auto& options) { return options[rng() % std::size(options)]; };
        LiveAccounting accounting(16);
        Lifetimes lifetimes(0, accounting);
        Model model;
        // The address freed last: the first allocation after a free takes it again half the
        // time, as an allocation loop does, so that the freed node reused in place (still in
        // the list of what it held) is met for every context, device and kind.
        uint64_t freed_last = 0;
        for (uint64_t t = 1; t <= 3000; ++t) {
            const unsigned roll = rng() % 100;
            Event e;
            if (roll < 40) {
                const Kind kind = pick(kinds);
                const Api api = kind == Kind::Array        ? Api::cudaMallocArray
                                : kind == Kind::HostPinned ? Api::cudaMallocHost
                                : kind == Kind::Pool       ? Api::cudaMallocAsync
                                                           : Api::cudaMalloc;
                const uint64_t address = freed_last != 0 && rng() % 2 == 0
                                             ? freed_last
                                             : 0x7f0000000000 + (rng() % 48) * (1u << 20);
                freed_last = 0;
                e = event(t, Op::Alloc, api, kind, address, pick(contexts), pick(devices));
                model.alloc(e);
            } else if (roll < 65) {
                // Free something live (pointer or array), with the call of its family.
                const bool array =
                    !model.arrays.empty() && (model.pointers.empty() || rng() % 3 == 0);
                const auto& held = array ? model.arrays : model.pointers;
                if (held.empty()) {
                    continue;
                }
                auto it = std::next(held.begin(), static_cast<long>(rng() % held.size()));
                const Api api = array                                 ? Api::cudaFreeArray
                                : it->second.kind == Kind::HostPinned ? Api::cudaFreeHost
                                                                      : Api::cudaFree;
                e = event(t, Op::Free, api, array ? Kind::Array : it->second.kind, it->first, 0, 0);
                freed_last = it->first;
                model.free(it->first, array);
            } else if (roll < 75) {
                e = event(t, Op::CtxCreate, Api::cuCtxCreate_v2, Kind::None, 0,
                          contexts[1 + rng() % 5], 0);
                model.ctxCreate(e.context);
            } else if (roll < 85) {
                e = event(t, Op::Teardown, Api::cuCtxDestroy_v2, Kind::None, 0,
                          contexts[1 + rng() % 5], -1);
                model.teardown(e);
            } else {
                e = event(t, Op::Teardown, Api::cudaDeviceReset, Kind::None, 0, 0, pick(devices));
                model.teardown(e);
            }
            lifetimes.onEvent(e);
            if (e.op == Op::Free && t < 3000) {
                // Compared after the next event instead: reading the live set settles the
                // freed node, which the next allocation could otherwise take back.
                continue;
            }
            INFO("seed " << seed << ", event " << t << ", op " << static_cast<int>(e.op));
            REQUIRE(heldOf(lifetimes.pointers()) == model.pointers);
            REQUIRE(heldOf(lifetimes.arrays()) == model.arrays);
        }
    }
}
