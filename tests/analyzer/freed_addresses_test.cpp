// FreedAddresses against the plain model of its rule: a map of freed addresses and a FIFO
// of the addresses as they were first stored, the oldest forgotten (from the map) once more
// than the capacity were stored. Keeping the last one aside must change nothing a caller
// sees.
#include "analysis/freed_addresses.h"

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <random>

using gmt::analyzer::FreedAddresses;

namespace {

class Model {
  public:
    explicit Model(size_t capacity) : capacity_(capacity) {}
    void remember(uint64_t address, const FreedAddresses::Freed& f) {
        auto [it, inserted] = map_.insert_or_assign(address, f);
        if (inserted) {
            order_.push_back(address);
            if (order_.size() > capacity_) {
                map_.erase(order_.front());
                order_.pop_front();
            }
        }
    }
    void forget(uint64_t address) { map_.erase(address); }
    const FreedAddresses::Freed* find(uint64_t address) const {
        auto it = map_.find(address);
        return it == map_.end() ? nullptr : &it->second;
    }

  private:
    size_t capacity_;
    std::map<uint64_t, FreedAddresses::Freed> map_;
    std::deque<uint64_t> order_;
};

} // namespace

TEST_CASE("freed addresses: the FIFO rule, whatever is kept aside") {
    for (size_t capacity : {1, 2, 7, 100, 5000}) {
        for (uint64_t addresses : {3, 20, 500}) {
            INFO("capacity " << capacity << ", " << addresses << " addresses");
            std::mt19937_64 rng(capacity * 1000 + addresses);
            FreedAddresses freed(capacity);
            Model model(capacity);
            for (uint32_t step = 0; step < 20'000; ++step) {
                const uint64_t address = rng() % addresses;
                const FreedAddresses::Freed f{step, gmt::format::Api::cudaMalloc, rng() % 2 == 0,
                                              step / 7};
                switch (rng() % 4) {
                case 0:
                case 1: // a free, often of the address allocated again next
                    freed.remember(address, f);
                    model.remember(address, f);
                    break;
                case 2:
                    freed.forget(address);
                    model.forget(address);
                    break;
                default:
                    break;
                }
                const uint64_t probe = rng() % addresses;
                const FreedAddresses::Freed* got = freed.find(probe);
                const FreedAddresses::Freed* want = model.find(probe);
                REQUIRE((got == nullptr) == (want == nullptr));
                if (got) {
                    REQUIRE(got->allocation_stack == want->allocation_stack);
                    REQUIRE(got->by_teardown == want->by_teardown);
                    REQUIRE(got->gaps == want->gaps);
                }
            }
        }
    }
}
