#include "fragmentation.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

// Keeps the `top` largest items seen, without holding all of them.
template <typename T, typename Less> class TopN {
  public:
    TopN(size_t n, Less less) : n_(n), less_(less) {}
    void push(const T& v) {
        if (n_ == 0) {
            return;
        }
        if (items_.size() < n_) {
            items_.push_back(v);
            std::push_heap(items_.begin(), items_.end(), greater());
        } else if (less_(items_.front(), v)) {
            std::pop_heap(items_.begin(), items_.end(), greater());
            items_.back() = v;
            std::push_heap(items_.begin(), items_.end(), greater());
        }
    }
    std::vector<T> sorted() && {
        std::sort(items_.begin(), items_.end(),
                  [&](const T& a, const T& b) { return less_(b, a); });
        return std::move(items_);
    }

  private:
    auto greater() const {
        return [this](const T& a, const T& b) { return less_(b, a); };
    }
    size_t n_;
    Less less_;
    std::vector<T> items_;
};

} // namespace

Fragmentation measureFragmentation(const Lifetimes& live, uint32_t process, int device,
                                   uint64_t granularity, size_t top) {
    const uint64_t g = granularity ? granularity : (2u << 20);
    auto floorG = [g](uint64_t x) { return x - x % g; };
    auto ceilG = [g](uint64_t x) { return x % g ? x - x % g + g : x; };

    Fragmentation f;
    f.process = process;
    f.device = device;
    f.granularity = g;
    auto holeLess = [](const Hole& a, const Hole& b) {
        return a.bytes != b.bytes ? a.bytes < b.bytes : a.address > b.address;
    };
    auto pinLess = [](const Pin& a, const Pin& b) {
        return a.pinned_bytes != b.pinned_bytes ? a.pinned_bytes < b.pinned_bytes
                                                : a.address > b.address;
    };
    TopN<Hole, decltype(holeLess)> holes(top, holeLess);
    TopN<Pin, decltype(pinLess)> pins(top, pinLess);
    auto addHole = [&](uint64_t address, uint64_t bytes) {
        if (bytes == 0) {
            return;
        }
        f.hole_bytes += bytes;
        f.largest_hole_bytes = std::max(f.largest_hole_bytes, bytes);
        ++f.hole_count;
        holes.push({address, bytes});
    };

    // Pointers on this device in address order (arrays have no addresses; pinned host
    // memory is not in the device's address space). Lifetimes keeps them disjoint.
    std::vector<const Allocation*> allocs;
    for (const auto& [address, a] : live.pointers()) {
        if (a.device == device && a.kind != format::Kind::HostPinned) {
            allocs.push_back(&a);
        }
    }
    auto endOf = [](const Allocation* a) { return a->address + std::max<uint64_t>(a->extent, 1); };
    for (size_t i = 0; i < allocs.size(); ++i) {
        const uint64_t s = allocs[i]->address;
        const uint64_t e = endOf(allocs[i]);
        if (i == 0) {
            addHole(floorG(s), s - floorG(s));
        } else {
            const uint64_t a = endOf(allocs[i - 1]);
            if (ceilG(a) >= floorG(s)) {
                addHole(a, s - a); // same or adjacent granules: one contiguous hole
            } else {
                addHole(a, ceilG(a) - a);
                addHole(floorG(s), s - floorG(s));
            }
        }
        if (i + 1 == allocs.size()) {
            addHole(e, ceilG(e) - e);
        }
        // Granules only this allocation touches: its first unless the previous allocation
        // ends in it, its last unless the next one starts in it.
        uint64_t from = floorG(s);
        uint64_t to = floorG(e - 1) + g;
        if (i > 0 && floorG(endOf(allocs[i - 1]) - 1) == from) {
            from += g;
        }
        if (i + 1 < allocs.size() && floorG(allocs[i + 1]->address) == to - g) {
            to -= g;
        }
        if (from < to) {
            const uint64_t used = std::min(e, to) - std::max(s, from);
            const uint64_t pinned = (to - from) - std::min(used, to - from);
            if (pinned > 0) {
                pins.push(Pin{s, allocs[i]->size, pinned, allocs[i]->stack, allocs[i]->kind,
                              allocs[i]->api});
            }
        }
    }

    // VMM reservations: unmapped gaps between the mappings inside each reservation. The
    // never-mapped head and tail are address space set aside, not fragmentation.
    const auto& maps = live.mappings();
    for (const auto& [base, r] : live.reservations()) {
        const uint64_t limit = base + r.size;
        auto it = maps.lower_bound(base);
        if (it == maps.end() || it->first >= limit) {
            continue;
        }
        for (auto next = std::next(it); next != maps.end() && next->first < limit;
             it = next, ++next) {
            const uint64_t gap_start = it->first + it->second.size;
            if (next->first <= gap_start) {
                continue;
            }
            auto h = live.handles().find(it->second.handle);
            int hole_device =
                h == live.handles().end() || h->second.host_located ? -1 : h->second.device;
            if (hole_device == device) {
                addHole(gap_start, next->first - gap_start);
            }
        }
    }

    f.ratio = f.hole_bytes ? 1.0 - static_cast<double>(f.largest_hole_bytes) /
                                       static_cast<double>(f.hole_bytes)
                           : 0.0;
    f.holes = std::move(holes).sorted();
    f.pins = std::move(pins).sorted();
    return f;
}

} // namespace gmt::analyzer
