// Shape: the axis lengths of a tensor, a std::vector<std::int64_t> in interface that keeps up to
// kInline lengths in itself. Every Tensor owns one, and most shapes have at most six axes, so a
// tensor's shape costs no heap allocation of its own (an einsum of a small output spent as much on
// allocating its shape as on its loops: docs/performance.md).
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace einfuzz {

/// Axis lengths; every entry >= 0. A rank-0 shape `{}` holds exactly one element. The elements are
/// contiguous (iterators are pointers, so a Shape converts to std::span<const std::int64_t>); the
/// first kInline live in the object, more in one heap block. As std::vector: an insertion may
/// invalidate every iterator, and a moved-from Shape is empty.
class Shape {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  static constexpr size_type kInline = 6;

  Shape() noexcept = default;
  explicit Shape(size_type n, std::int64_t value = 0) { assign(n, value); }
  Shape(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  /// From a std::vector of lengths (explicit: a copy).
  explicit Shape(const std::vector<std::int64_t>& v) { assign(v.begin(), v.end()); }
  Shape(const Shape& other) {
    if (other.on_heap()) {
      assign(other.begin(), other.end());
    } else {
      // The whole inline array, a fixed 48 bytes: a few moves where a copy of `size` elements is
      // a call to memmove.
      std::copy_n(other.inline_, kInline, inline_);
      size_ = other.size_;
    }
  }
  Shape(Shape&& other) noexcept { take(other); }
  ~Shape() { release(); }

  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<std::int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }

  void assign(size_type n, std::int64_t value) {
    clear();
    reserve(n);
    std::fill_n(data_, n, value);
    size_ = n;
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) {
      const auto n = static_cast<size_type>(std::distance(first, last));
      reserve(n);
      std::copy(first, last, data_);
      size_ = n;
    } else {
      for (; first != last; ++first) push_back(static_cast<std::int64_t>(*first));
    }
  }
  void assign(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.end()); }

  // Element access.
  std::int64_t& operator[](size_type i) noexcept { return data_[i]; }
  const std::int64_t& operator[](size_type i) const noexcept { return data_[i]; }
  std::int64_t& at(size_type i) { return data_[checked(i)]; }
  const std::int64_t& at(size_type i) const { return data_[checked(i)]; }
  std::int64_t& front() noexcept { return data_[0]; }
  const std::int64_t& front() const noexcept { return data_[0]; }
  std::int64_t& back() noexcept { return data_[size_ - 1]; }
  const std::int64_t& back() const noexcept { return data_[size_ - 1]; }
  std::int64_t* data() noexcept { return data_; }
  const std::int64_t* data() const noexcept { return data_; }

  // Iterators.
  iterator begin() noexcept { return data_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator cbegin() const noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  // Capacity.
  bool empty() const noexcept { return size_ == 0; }
  size_type size() const noexcept { return size_; }
  size_type capacity() const noexcept { return capacity_; }
  void reserve(size_type n) {
    if (n > capacity_) grow(n);
  }

  // Modifiers.
  void clear() noexcept { size_ = 0; }
  void push_back(std::int64_t value) {
    if (size_ == capacity_) grow(2 * capacity_);  // `value` is copied first: it may be an element
    data_[size_++] = value;
  }
  std::int64_t& emplace_back(std::int64_t value) {
    push_back(value);
    return back();
  }
  void pop_back() noexcept { --size_; }
  void resize(size_type n, std::int64_t value = 0) {
    if (n > size_) {
      reserve(n);
      std::fill(data_ + size_, data_ + n, value);
    }
    size_ = n;
  }
  iterator insert(const_iterator pos, std::int64_t value) { return insert(pos, size_type{1}, value); }
  iterator insert(const_iterator pos, size_type n, std::int64_t value) {
    const auto at = static_cast<size_type>(pos - data_);
    open_gap(at, n);
    std::fill_n(data_ + at, n, value);
    return data_ + at;
  }
  template <std::input_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const auto at = static_cast<size_type>(pos - data_);
    // Copied first: the range may lie in this Shape, whose storage the gap moves.
    const Shape values(first, last);
    open_gap(at, values.size_);
    std::copy(values.begin(), values.end(), data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<std::int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) noexcept { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) noexcept {
    const auto at = static_cast<size_type>(first - data_);
    const auto n = static_cast<size_type>(last - first);
    std::copy(data_ + at + n, data_ + size_, data_ + at);
    size_ -= n;
    return data_ + at;
  }
  void swap(Shape& other) noexcept {
    Shape t(std::move(other));
    other = std::move(*this);
    *this = std::move(t);
  }

  /// A std::vector of the same lengths.
  std::vector<std::int64_t> to_vector() const { return {begin(), end()}; }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) noexcept {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }
  friend void swap(Shape& a, Shape& b) noexcept { a.swap(b); }

 private:
  bool on_heap() const noexcept { return data_ != inline_; }
  size_type checked(size_type i) const {
    if (i >= size_) throw std::out_of_range("Shape::at: index " + std::to_string(i) + " of " + std::to_string(size_));
    return i;
  }
  /// Capacity for at least n (n > capacity_), in one new heap block.
  void grow(size_type n) {
    const size_type capacity = std::max({n, 2 * capacity_, kInline});
    auto* block = static_cast<std::int64_t*>(::operator new(capacity * sizeof(std::int64_t)));
    std::copy(data_, data_ + size_, block);
    release();
    data_ = block;
    capacity_ = capacity;
  }
  void release() noexcept {
    if (on_heap()) ::operator delete(data_);
    data_ = inline_;
    capacity_ = kInline;
  }
  /// Leaves `other` empty with its inline storage; this Shape was released or never held a block.
  void take(Shape& other) noexcept {
    if (other.on_heap()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
    } else {
      std::copy_n(other.inline_, kInline, inline_);  // as the copy constructor
    }
    size_ = other.size_;
    other.data_ = other.inline_;
    other.capacity_ = kInline;
    other.size_ = 0;
  }
  /// n uninitialised positions at `at`, the elements after it moved up.
  void open_gap(size_type at, size_type n) {
    reserve(size_ + n);
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += n;
  }

  std::int64_t* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = kInline;
  std::int64_t inline_[kInline] = {};
};

}  // namespace einfuzz
