// FreedAddresses against the plain model of its rule: a map of freed addresses and a FIFO
// of the addresses as they were stored, the oldest forgotten (from the map) once more than
// the capacity were stored; the address freed last is stored only when another address is
// freed while it is still remembered.
#include "analysis/freed_addresses.h"

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <optional>
#include <random>

using gmt::analyzer::FreedAddresses;

namespace {

class Model {
  public:
    explicit Model(size_t capacity) : capacity_(capacity) {}
    void remember(uint64_t address, const FreedAddresses::Freed& f) {
        if (last_ != address && last_) {
            order_.push_back(*last_);
            if (order_.size() > capacity_) {
                map_.erase(order_.front());
                order_.pop_front();
            }
            last_.reset();
        }
        auto [it, inserted] = map_.insert_or_assign(address, f);
        if (inserted) {
            last_ = address;
        }
    }
    void forget(uint64_t address) {
        map_.erase(address);
        if (last_ == address) {
            last_.reset();
        }
    }
    const FreedAddresses::Freed* find(uint64_t address) const {
        auto it = map_.find(address);
        return it == map_.end() ? nullptr : &it->second;
    }

  private:
    size_t capacity_;
    std::map<uint64_t, FreedAddresses::Freed> map_;
    std::deque<uint64_t> order_;
    std::optional<uint64_t> last_; // in map_, not in order_ yet
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

TEST_CASE("freed addresses: a free undone by an allocation at its address takes no place") {
    FreedAddresses freed(2);
    const FreedAddresses::Freed f{7, gmt::format::Api::cudaMalloc, false, 0};
    freed.remember(0x100, f);
    freed.remember(0x200, f);
    freed.remember(0x300, f);
    // Allocation in a loop at one address: a free, then an allocation there, many times.
    // The first free stores 0x300, which pushes 0x100 out; the rest leave no trace.
    for (int i = 0; i < 1000; ++i) {
        freed.remember(0x400, f);
        REQUIRE(freed.find(0x400) != nullptr);
        freed.forget(0x400);
    }
    REQUIRE(freed.find(0x400) == nullptr);
    REQUIRE(freed.find(0x100) == nullptr);
    REQUIRE(freed.find(0x200) != nullptr);
    REQUIRE(freed.find(0x300) != nullptr);
    // Frees that stay: each stores the one before, and the oldest goes.
    freed.remember(0x500, f);
    REQUIRE(freed.find(0x200) != nullptr);
    freed.remember(0x600, f);
    REQUIRE(freed.find(0x200) == nullptr);
    REQUIRE(freed.find(0x300) != nullptr);
    REQUIRE(freed.find(0x500) != nullptr);
}
