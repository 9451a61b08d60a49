// The parts of a gang's placement: (machine, GPUs) pairs with room for one inline, since most
// gangs sit on one machine. The simulator keeps two placements per job (current and last):
// inline parts save a heap block per job (32 bytes and a malloc) and 8 bytes of size each.
// The subset of std::vector's interface the project uses. Thread safety: a value type.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>

namespace astraeus {

/// One machine's share of a gang.
struct PlacementPart {
    int machine;
    int gpus;
    bool operator==(const PlacementPart&) const = default;
};

class PlacementParts {
public:
    using value_type = PlacementPart;
    using size_type = std::size_t;
    using iterator = PlacementPart*;
    using const_iterator = const PlacementPart*;

    PlacementParts() = default;
    PlacementParts(std::initializer_list<PlacementPart> l) { assign(l.begin(), l.end()); }
    PlacementParts(const PlacementParts& o) { assign(o.begin(), o.end()); }
    PlacementParts(PlacementParts&& o) noexcept { steal(o); }
    PlacementParts& operator=(const PlacementParts& o) {
        if (this != &o) assign(o.begin(), o.end());
        return *this;
    }
    PlacementParts& operator=(PlacementParts&& o) noexcept {
        if (this != &o) {
            release();
            steal(o);
        }
        return *this;
    }
    ~PlacementParts() { release(); }

    size_type size() const { return size_; }
    bool empty() const { return size_ == 0; }
    PlacementPart* data() { return cap_ > 1 ? heap_ : &inline_; }
    const PlacementPart* data() const { return cap_ > 1 ? heap_ : &inline_; }
    iterator begin() { return data(); }
    iterator end() { return data() + size_; }
    const_iterator begin() const { return data(); }
    const_iterator end() const { return data() + size_; }
    PlacementPart& operator[](size_type i) { return data()[i]; }
    const PlacementPart& operator[](size_type i) const { return data()[i]; }
    const PlacementPart& at(size_type i) const {
        if (i >= size_) throw std::out_of_range("PlacementParts::at");
        return data()[i];
    }
    PlacementPart& front() { return data()[0]; }
    const PlacementPart& front() const { return data()[0]; }
    PlacementPart& back() { return data()[size_ - 1]; }
    const PlacementPart& back() const { return data()[size_ - 1]; }

    void push_back(const PlacementPart& p) {
        if (size_ == cap_) grow(cap_ * 2);
        data()[size_++] = p;
    }
    PlacementPart& emplace_back(int machine, int gpus) {
        push_back({machine, gpus});
        return back();
    }
    void clear() { size_ = 0; }
    void reserve(size_type n) {
        if (n > cap_) grow(static_cast<std::uint32_t>(n));
    }
    void shrink_to_fit() {}
    template <class It>
    void assign(It first, It last) {
        clear();
        reserve(static_cast<size_type>(std::distance(first, last)));
        for (; first != last; ++first) push_back(*first);
    }
    bool operator==(const PlacementParts& o) const {
        return std::equal(begin(), end(), o.begin(), o.end());
    }

private:
    void grow(std::uint32_t cap) {
        PlacementPart* p = new PlacementPart[cap];
        std::copy(begin(), end(), p);
        release();
        heap_ = p;
        cap_ = cap;
    }
    void release() {
        if (cap_ > 1) delete[] heap_;
        cap_ = 1;
    }
    void steal(PlacementParts& o) {
        size_ = o.size_;
        cap_ = o.cap_;
        if (cap_ > 1) heap_ = o.heap_;
        else inline_ = o.inline_;
        o.size_ = 0;
        o.cap_ = 1;
    }

    std::uint32_t size_ = 0;
    std::uint32_t cap_ = 1;  ///< 1: the part is inline
    union {
        PlacementPart inline_{0, 0};
        PlacementPart* heap_;
    };
};

}  // namespace astraeus
