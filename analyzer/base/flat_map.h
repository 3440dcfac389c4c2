// A small open-addressing hash map from uint64_t keys to trivially copyable values, for
// the per-event lookups of the analysis (live allocations, freed addresses, sites):
// linear probing, power-of-two capacity, backward-shift deletion (no tombstones), one
// contiguous array and no per-entry allocation. Pointers to values stay valid until the
// next insertion. Iteration order is unspecified; callers that report iterate something
// ordered or sort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace gmt::analyzer {

template <typename V> class FlatMap {
    static_assert(std::is_trivially_copyable_v<V>);

  public:
    size_t size() const { return size_ + (has_max_ ? 1 : 0); }
    bool empty() const { return size() == 0; }

    V* find(uint64_t key) {
        if (key == kEmpty) [[unlikely]] {
            return has_max_ ? &max_value_ : nullptr;
        }
        if (size_ == 0) {
            return nullptr;
        }
        for (size_t i = slot(key);; i = (i + 1) & mask_) {
            Entry& e = entries_[i];
            if (e.key == key) {
                return &e.value;
            }
            if (e.key == kEmpty) {
                return nullptr;
            }
        }
    }
    const V* find(uint64_t key) const { return const_cast<FlatMap*>(this)->find(key); }
    bool contains(uint64_t key) const { return find(key) != nullptr; }

    // The value for `key`, value-initialised when new; second: whether it was inserted.
    std::pair<V*, bool> tryEmplace(uint64_t key) {
        if (key == kEmpty) [[unlikely]] {
            bool inserted = !has_max_;
            if (inserted) {
                has_max_ = true;
                max_value_ = V{};
            }
            return {&max_value_, inserted};
        }
        if ((size_ + 1) * 4 > entries_.size() * 3) {
            grow();
        }
        for (size_t i = slot(key);; i = (i + 1) & mask_) {
            Entry& e = entries_[i];
            if (e.key == key) {
                return {&e.value, false};
            }
            if (e.key == kEmpty) {
                e.key = key;
                e.value = V{};
                ++size_;
                return {&e.value, true};
            }
        }
    }
    V& operator[](uint64_t key) { return *tryEmplace(key).first; }

    bool erase(uint64_t key) {
        if (key == kEmpty) [[unlikely]] {
            bool had = has_max_;
            has_max_ = false;
            return had;
        }
        if (size_ == 0) {
            return false;
        }
        size_t i = slot(key);
        for (;; i = (i + 1) & mask_) {
            if (entries_[i].key == key) {
                break;
            }
            if (entries_[i].key == kEmpty) {
                return false;
            }
        }
        // Backward shift: move later entries of the probe run into the hole when their
        // home slot does not lie (cyclically) between the hole and them.
        for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
            Entry& e = entries_[j];
            if (e.key == kEmpty) {
                break;
            }
            size_t home = slot(e.key);
            if (((j - home) & mask_) >= ((j - i) & mask_)) {
                entries_[i] = e;
                i = j;
            }
        }
        entries_[i].key = kEmpty;
        --size_;
        return true;
    }

    void clear() {
        entries_.clear();
        mask_ = 0;
        size_ = 0;
        has_max_ = false;
    }

    template <typename F> void forEach(F&& f) const {
        for (const Entry& e : entries_) {
            if (e.key != kEmpty) {
                f(e.key, e.value);
            }
        }
        if (has_max_) {
            f(kEmpty, max_value_);
        }
    }

  private:
    static constexpr uint64_t kEmpty = ~uint64_t{0};
    struct Entry {
        uint64_t key = kEmpty;
        V value{};
    };

    size_t slot(uint64_t key) const {
        return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_;
    }

    void grow() {
        std::vector<Entry> old = std::move(entries_);
        size_t capacity = old.empty() ? 16 : old.size() * 2;
        entries_.assign(capacity, Entry{});
        mask_ = capacity - 1;
        shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
        for (const Entry& e : old) {
            if (e.key != kEmpty) {
                size_t i = slot(e.key);
                while (entries_[i].key != kEmpty) {
                    i = (i + 1) & mask_;
                }
                entries_[i] = e;
            }
        }
    }

    std::vector<Entry> entries_;
    size_t mask_ = 0;
    unsigned shift_ = 64;
    size_t size_ = 0;
    bool has_max_ = false;
    V max_value_{};
};

} // namespace gmt::analyzer
