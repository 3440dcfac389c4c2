#include "analysis/fragmentation.h"

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

auto holeLess = [](const HoleReport& a, const HoleReport& b) {
    return a.bytes != b.bytes ? a.bytes < b.bytes : a.address > b.address;
};
auto pinLess = [](const Pin& a, const Pin& b) {
    return a.pinned_bytes != b.pinned_bytes ? a.pinned_bytes < b.pinned_bytes
                                            : a.address > b.address;
};

uint64_t endOf(const Allocation* a) {
    return a->address + std::max<uint64_t>(a->extent, 1);
}

// Collects the layout while the measurement walks the live set: allocations in address
// order, then reservations in theirs. Each walk keeps its first `cap` entries; the layout
// is the first `cap` of both together.
class LayoutCollector {
  public:
    explicit LayoutCollector(size_t cap) : cap_(cap) {}
    void span(uint64_t address, uint64_t bytes, bool reservation) {
        ++layout_.span_count;
        keep(walks_[walk_].spans, LayoutSpanReport{address, bytes, reservation});
    }
    void block(const LayoutBlock& b) {
        ++layout_.block_count;
        keep(walks_[walk_].blocks, b);
    }
    void hole(uint64_t address, uint64_t bytes) {
        keep(walks_[walk_].holes, HoleReport{address, bytes});
    }
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

// One device's measurement, fed its pointer allocations in address order. An allocation's
// pinning depends on its neighbours on both sides, so each waits (`pending`) until the
// next one on the same device arrives, or the walk ends.
class DeviceMeter {
  public:
    DeviceMeter(uint32_t process, int device, uint64_t granularity, size_t top,
                size_t layout_entries)
        : g_(granularity ? granularity : (2u << 20)), holes_(top, holeLess), pins_(top, pinLess),
          layout_entries_(layout_entries), layout_(layout_entries) {
        f_.process = process;
        f_.device = device;
        f_.granularity = g_;
    }

    void addHole(uint64_t address, uint64_t bytes) {
        if (bytes == 0) {
            return;
        }
        layout_.hole(address, bytes);
        f_.hole_bytes += bytes;
        f_.largest_hole_bytes = std::max(f_.largest_hole_bytes, bytes);
        ++f_.hole_count;
        holes_.push({address, bytes});
    }

    void allocation(const Allocation* a) {
        const uint64_t s = a->address;
        if (!pending_) {
            run_start_ = floorG(s);
            addHole(floorG(s), s - floorG(s));
        } else {
            const uint64_t e = endOf(pending_);
            if (ceilG(e) >= floorG(s)) {
                addHole(e, s - e); // same or adjacent granules: one contiguous hole
            } else {
                addHole(e, ceilG(e) - e);
                layout_.span(run_start_, ceilG(e) - run_start_, false);
                run_start_ = floorG(s);
                addHole(floorG(s), s - floorG(s));
            }
            pin(pending_, before_, a);
        }
        before_ = pending_;
        pending_ = a;
    }

    Fragmentation finish() && {
        if (pending_) {
            const uint64_t e = endOf(pending_);
            addHole(e, ceilG(e) - e);
            layout_.span(run_start_, ceilG(e) - run_start_, false);
            pin(pending_, before_, nullptr);
        }
        f_.ratio = f_.hole_bytes ? 1.0 - static_cast<double>(f_.largest_hole_bytes) /
                                             static_cast<double>(f_.hole_bytes)
                                 : 0.0;
        f_.holes = std::move(holes_).sorted();
        f_.pins = std::move(pins_).sorted();
        if (layout_entries_ > 0) {
            f_.has_layout = true;
            f_.layout = std::move(layout_).take();
        }
        return std::move(f_);
    }

    // The VMM part of the layout: called after every pointer allocation was seen.
    void startReservations() { layout_.startReservations(); }
    void mapping(uint64_t reservation, uint64_t reservation_bytes, const LayoutBlock& block) {
        if (layout_entries_ == 0) {
            return;
        }
        if (!spanned_ || spanned_reservation_ != reservation) {
            layout_.span(reservation, reservation_bytes, true);
            spanned_ = true;
            spanned_reservation_ = reservation;
        }
        layout_.block(block);
    }

  private:
    uint64_t floorG(uint64_t x) const { return x - x % g_; }
    uint64_t ceilG(uint64_t x) const { return x % g_ ? x - x % g_ + g_ : x; }

    // Granules only `a` touches: its first unless the previous allocation ends in it,
    // its last unless the next one starts in it.
    void pin(const Allocation* a, const Allocation* prev, const Allocation* next) {
        const uint64_t s = a->address;
        const uint64_t e = endOf(a);
        uint64_t from = floorG(s);
        uint64_t to = floorG(e - 1) + g_;
        if (prev && floorG(endOf(prev) - 1) == from) {
            from += g_;
        }
        if (next && floorG(next->address) == to - g_) {
            to -= g_;
        }
        uint64_t pinned = 0;
        if (from < to) {
            const uint64_t used = std::min(e, to) - std::max(s, from);
            pinned = (to - from) - std::min(used, to - from);
            if (pinned > 0) {
                pins_.push(Pin{s, a->size, pinned, a->stack, a->kind, a->api});
            }
        }
        layout_.block(LayoutBlock{s, e - s, a->size, pinned, a->stack, a->kind, a->api});
    }

    uint64_t g_;
    Fragmentation f_;
    TopN<HoleReport, decltype(holeLess)> holes_;
    TopN<Pin, decltype(pinLess)> pins_;
    const Allocation* before_ = nullptr;  // the allocation before pending_
    const Allocation* pending_ = nullptr; // the last one seen, its pinning not yet known
    size_t layout_entries_;
    LayoutCollector layout_;
    uint64_t run_start_ = 0; // the run of touched granules pending_ is in
    bool spanned_ = false;   // the layout has a span for the reservation below
    uint64_t spanned_reservation_ = 0;
};

} // namespace

std::vector<Fragmentation> measureFragmentation(const Lifetimes& live, uint32_t process,
                                                const std::vector<FragmentationRequest>& devices,
                                                size_t top, size_t layout_entries) {
    std::vector<DeviceMeter> meters;
    meters.reserve(devices.size());
    // device -> meter, sorted by device for the lookup of each allocation's meter
    std::vector<std::pair<int, size_t>> index;
    for (const FragmentationRequest& r : devices) {
        meters.emplace_back(process, r.device, r.granularity, top, layout_entries);
        index.emplace_back(r.device, index.size());
    }
    std::sort(index.begin(), index.end());
    auto meterOf = [&](int device) -> DeviceMeter* {
        auto it = std::lower_bound(index.begin(), index.end(), std::pair(device, size_t{0}));
        return it != index.end() && it->first == device ? &meters[it->second] : nullptr;
    };

    // Pointers in address order (arrays have no addresses; pinned host memory is not in a
    // device's address space). Lifetimes keeps them disjoint.
    DeviceMeter* last = nullptr;
    int last_device = 0;
    for (const auto& [address, a] : live.pointers()) {
        if (a.kind == format::Kind::HostPinned) {
            continue;
        }
        if (!last || a.device != last_device) {
            last = meterOf(a.device);
            last_device = a.device;
        }
        if (last) {
            last->allocation(&a);
        }
    }

    // VMM reservations: unmapped gaps between the mappings inside each reservation. The
    // never-mapped head and tail are address space set aside, not fragmentation.
    // Reservations overlap only in a damaged trace; a gap two of them share is counted
    // once, and each walk starts where the previous one got to, so the whole is
    // O(reservations + mappings).
    const auto& maps = live.mappings();
    for (DeviceMeter& m : meters) {
        m.startReservations();
    }
    auto deviceHandleOf = [&](const Mapping& m) -> const PhysicalHandle* {
        auto h = live.handles().find(m.handle);
        return h == live.handles().end() || h->second.host_located ? nullptr : &h->second;
    };
    uint64_t walked = 0; // where the last walk stopped: gaps left of it are counted
    for (const auto& [base, r] : live.reservations()) {
        const uint64_t limit = r.size > UINT64_MAX - base ? UINT64_MAX : base + r.size;
        auto it = maps.lower_bound(std::max(base, walked));
        if (it == maps.end() || it->first >= limit) {
            continue;
        }
        for (auto m = it; layout_entries > 0 && m != maps.end() && m->first < limit; ++m) {
            const PhysicalHandle* h = deviceHandleOf(m->second);
            if (DeviceMeter* meter = h ? meterOf(h->device) : nullptr) {
                meter->mapping(base, r.size,
                               LayoutBlock{m->first, m->second.size, m->second.size, 0, h->stack,
                                           format::Kind::Vmm, h->api});
            }
        }
        for (auto next = std::next(it); next != maps.end() && next->first < limit;
             it = next, ++next) {
            const uint64_t gap_start = it->first + it->second.size;
            if (next->first <= gap_start) {
                continue;
            }
            // The gap belongs to the device of the handle mapped on its left.
            const PhysicalHandle* h = deviceHandleOf(it->second);
            if (DeviceMeter* m = h ? meterOf(h->device) : nullptr) {
                m->addHole(gap_start, next->first - gap_start);
            }
        }
        walked = it->first; // the last mapping inside: its gap to the right is not counted
    }

    std::vector<Fragmentation> out;
    out.reserve(meters.size());
    for (DeviceMeter& m : meters) {
        out.push_back(std::move(m).finish());
    }
    return out;
}

Fragmentation measureFragmentation(const Lifetimes& live, uint32_t process, int device,
                                   uint64_t granularity, size_t top, size_t layout_entries) {
    return std::move(
        measureFragmentation(live, process, {{device, granularity}}, top, layout_entries).front());
}

} // namespace gmt::analyzer
