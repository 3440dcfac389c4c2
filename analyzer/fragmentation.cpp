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

namespace {

// Collects the layout while the measurement walks the live set: allocations in address
// order, then reservations in theirs. Each walk keeps its first `cap` entries; the layout
// is the first `cap` of both together.
class LayoutCollector {
  public:
    explicit LayoutCollector(size_t cap) : cap_(cap) {}
    void span(uint64_t address, uint64_t bytes, bool reservation) {
        ++layout_.span_count;
        keep(walks_[walk_].spans, LayoutSpan{address, bytes, reservation});
    }
    void block(const LayoutBlock& b) {
        ++layout_.block_count;
        keep(walks_[walk_].blocks, b);
    }
    void hole(uint64_t address, uint64_t bytes) { keep(walks_[walk_].holes, Hole{address, bytes}); }
    void startReservations() { walk_ = 1; }
    AddressLayout take() && {
        merge(&AddressLayout::spans);
        merge(&AddressLayout::blocks);
        merge(&AddressLayout::holes);
        return std::move(layout_);
    }

  private:
    template <typename T> void keep(std::vector<T>& v, const T& item) {
        if (v.size() < cap_) {
            v.push_back(item);
        }
    }
    template <typename T> void merge(std::vector<T> AddressLayout::*list) {
        std::vector<T>& out = layout_.*list;
        for (AddressLayout& w : walks_) {
            out.insert(out.end(), (w.*list).begin(), (w.*list).end());
        }
        std::stable_sort(out.begin(), out.end(),
                         [](const T& a, const T& b) { return a.address < b.address; });
        if (out.size() > cap_) {
            out.resize(cap_);
        }
    }
    size_t cap_;
    size_t walk_ = 0;
    AddressLayout walks_[2];
    AddressLayout layout_;
};

} // namespace

Fragmentation measureFragmentation(const Lifetimes& live, uint32_t process, int device,
                                   uint64_t granularity, size_t top, size_t layout_entries) {
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
    LayoutCollector layout(layout_entries);
    auto addHole = [&](uint64_t address, uint64_t bytes) {
        if (bytes == 0) {
            return;
        }
        layout.hole(address, bytes);
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
    uint64_t run_start = 0; // the run of touched granules the current allocation is in
    for (size_t i = 0; i < allocs.size(); ++i) {
        const uint64_t s = allocs[i]->address;
        const uint64_t e = endOf(allocs[i]);
        if (i == 0) {
            run_start = floorG(s);
            addHole(floorG(s), s - floorG(s));
        } else {
            const uint64_t a = endOf(allocs[i - 1]);
            if (ceilG(a) >= floorG(s)) {
                addHole(a, s - a); // same or adjacent granules: one contiguous hole
            } else {
                addHole(a, ceilG(a) - a);
                layout.span(run_start, ceilG(a) - run_start, false);
                run_start = floorG(s);
                addHole(floorG(s), s - floorG(s));
            }
        }
        if (i + 1 == allocs.size()) {
            addHole(e, ceilG(e) - e);
            layout.span(run_start, ceilG(e) - run_start, false);
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
        uint64_t pinned = 0;
        if (from < to) {
            const uint64_t used = std::min(e, to) - std::max(s, from);
            pinned = (to - from) - std::min(used, to - from);
            if (pinned > 0) {
                pins.push(Pin{s, allocs[i]->size, pinned, allocs[i]->stack, allocs[i]->kind,
                              allocs[i]->api});
            }
        }
        layout.block(LayoutBlock{s, e - s, allocs[i]->size, pinned, allocs[i]->stack,
                                 allocs[i]->kind, allocs[i]->api});
    }

    // VMM reservations: unmapped gaps between the mappings inside each reservation. The
    // never-mapped head and tail are address space set aside, not fragmentation.
    const auto& maps = live.mappings();
    layout.startReservations();
    auto onDevice = [&](const Mapping& m) {
        auto h = live.handles().find(m.handle);
        return h != live.handles().end() && !h->second.host_located && h->second.device == device;
    };
    for (const auto& [base, r] : live.reservations()) {
        const uint64_t limit = base + r.size;
        auto it = maps.lower_bound(base);
        if (it == maps.end() || it->first >= limit) {
            continue;
        }
        bool spanned = false;
        for (auto m = it; layout_entries > 0 && m != maps.end() && m->first < limit; ++m) {
            if (!onDevice(m->second)) {
                continue;
            }
            if (!spanned) {
                layout.span(base, r.size, true);
                spanned = true;
            }
            const PhysicalHandle& h = live.handles().at(m->second.handle);
            layout.block(LayoutBlock{m->first, m->second.size, m->second.size, 0, h.stack,
                                     format::Kind::Vmm, h.api});
        }
        for (auto next = std::next(it); next != maps.end() && next->first < limit;
             it = next, ++next) {
            const uint64_t gap_start = it->first + it->second.size;
            if (next->first <= gap_start) {
                continue;
            }
            // The gap belongs to the device of the handle mapped on its left.
            if (onDevice(it->second)) {
                addHole(gap_start, next->first - gap_start);
            }
        }
    }

    f.ratio = f.hole_bytes ? 1.0 - static_cast<double>(f.largest_hole_bytes) /
                                       static_cast<double>(f.hole_bytes)
                           : 0.0;
    f.holes = std::move(holes).sorted();
    f.pins = std::move(pins).sorted();
    if (layout_entries > 0) {
        f.has_layout = true;
        f.layout = std::move(layout).take();
    }
    return f;
}

} // namespace gmt::analyzer
