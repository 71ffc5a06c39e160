// SlotVector<T>: the growable array of the per-entity data (the store's records, the depth
// order's nodes and entries, the id map, the Propagator's bookkeeping), for trivially copyable
// T. It differs from std::vector in two ways, both about big scenes:
//
// - It never copies itself to grow. Past 2 MiB it reserves address space for as many elements as
//   a slot index can name (at most 64 GiB; MAP_NORESERVE, so nothing is committed or counted
//   until touched) and grows inside it: the element addresses stay put. A std::vector of a
//   10-million-entity store copied its 640 MB of records (and the order its nodes, and the
//   Propagator its entries) in the frame that spawned past the capacity: hundreds of
//   milliseconds of hitch. Where the reservation is refused (strict overcommit) or outgrown, it
//   falls back to doubling and copying, like std::vector.
// - It is backed by 2 MiB pages where Linux allows it (MADV_HUGEPAGE). A frame that changes a
//   few thousand scattered entities of a million touches a few cache lines per entity in arrays
//   of tens of megabytes; with 4 KiB pages nearly every one of those accesses also misses the
//   TLB and walks the page tables. On the development VM (transparent huge pages in `madvise`
//   mode, the default of many distributions) three scattered lines per entity of 10,000 entities
//   took 0.5 ms with 4 KiB pages and 0.25 ms with 2 MiB pages. The kernel may still decline (no
//   free huge pages): then the memory is ordinary, only slower.
//
// Below 2 MiB, and on other systems, the storage is plain operator new with doubling.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "huge_pages.h"

namespace tprop {

template <class T>
class SlotVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "elements are moved by copying their bytes");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SlotVector() = default;
  SlotVector(const SlotVector& other) { *this = other; }
  SlotVector(SlotVector&& other) noexcept { swap(other); }
  SlotVector& operator=(const SlotVector& other) {
    if (this != &other) {
      clear();
      reserve(other.size_);
      if (other.size_) std::memcpy(static_cast<void*>(data_), other.data_, other.size_ * sizeof(T));
      size_ = other.size_;
    }
    return *this;
  }
  SlotVector& operator=(SlotVector&& other) noexcept {
    SlotVector(std::move(other)).swap(*this);
    return *this;
  }
  ~SlotVector() { release(); }

  void swap(SlotVector& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(mapped_bytes_, other.mapped_bytes_);
    std::swap(advise_, other.advise_);
  }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) {
    assert(i < size_);
    return data_[i];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return data_[i];
  }
  T& back() {
    assert(size_ > 0);
    return data_[size_ - 1];
  }
  const T& back() const {
    assert(size_ > 0);
    return data_[size_ - 1];
  }

  void push_back(const T& v) {
    if (size_ == capacity_) grow(size_ + 1);
    new (data_ + size_) T(v);
    ++size_;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) grow(size_ + 1);
    T* p = new (data_ + size_) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  // One more element, left as the storage holds it (T is trivially copyable): for a caller that
  // writes it whole next, without the writes of a construction first.
  T& append_uninitialized() {
    if (size_ == capacity_) grow(size_ + 1);
    return data_[size_++];
  }
  void pop_back() {
    assert(size_ > 0);
    --size_;
  }
  void resize(size_t n) { resize(n, T{}); }
  void resize(size_t n, const T& v) {
    if (n > capacity_) grow(n);
    for (size_t i = size_; i < n; ++i) new (data_ + i) T(v);
    size_ = n;
  }
  void assign(size_t n, const T& v) {
    size_ = 0;
    resize(n, v);
  }
  void reserve(size_t n) {
    if (n > capacity_) grow(n);
  }
  // Keeps the storage (and its reservation), like std::vector.
  void clear() { size_ = 0; }
  // Replaces the contents with n elements of all-zero bytes. Big arrays get fresh pages, which
  // the kernel supplies zeroed as they are first touched, so this costs nothing up front (a
  // 256 MB table filled at once took half a second on the development VM), and ordinary 4 KiB
  // pages until advise_huge_pages(): scattered first touches of 2 MiB pages pay for zeroing
  // (and, with THP's defrag in its default `madvise` mode, compacting) 2 MiB each, about 4 ms
  // apiece there, all within the first few hundred writes.
  void assign_zeroed(size_t n) {
    release();
    size_ = 0;
    if (n == 0) return;
    advise_ = false;
    grow(n);
    advise_ = true;
    if (!mapped_bytes_) std::memset(static_cast<void*>(data_), 0, n * sizeof(T));
    size_ = n;
  }
  // Asks for 2 MiB pages for the mapped storage after all; the kernel's background collapsing
  // (khugepaged) then brings them in without stalling a writer.
  void advise_huge_pages() {
#if defined(__linux__)
    if (mapped_bytes_) madvise(static_cast<void*>(data_), mapped_bytes_, MADV_HUGEPAGE);
#endif
  }

 private:
  static constexpr size_t kHugePage = kHugePageBytes;
  // Slot indices are 32-bit; and no one array needs more address space than this.
  static constexpr size_t kMaxReserveBytes = size_t(64) << 30;
  static constexpr size_t kReserveBytes =
      std::min(kMaxReserveBytes, ((size_t(1) << 32) * sizeof(T) + kHugePage - 1) & ~(kHugePage - 1));

  // Room for at least `n` elements, keeping the present ones.
  void grow(size_t n) {
    const size_t wanted = std::max(n, capacity_ * 2);
#if defined(__linux__)
    if (mapped_bytes_ == kReserveBytes && n * sizeof(T) <= kReserveBytes) {
      // Inside the reservation: nothing moves, the pages come in as they are touched.
      capacity_ = std::min(wanted, kReserveBytes / sizeof(T));
      return;
    }
    if (wanted * sizeof(T) >= kHugePage) {
      if (n * sizeof(T) <= kReserveBytes && mapped_bytes_ != kReserveBytes &&
          move_to(map(kReserveBytes), kReserveBytes)) {
        capacity_ = std::min(wanted, kReserveBytes / sizeof(T));
        return;
      }
      // Refused or outgrown: a mapping of the doubled size, copied into.
      const size_t bytes = (wanted * sizeof(T) + kHugePage - 1) & ~(kHugePage - 1);
      if (!move_to(map(bytes), bytes)) throw std::bad_alloc();
      capacity_ = bytes / sizeof(T);
      return;
    }
#endif
    T* p = static_cast<T*>(::operator new(wanted * sizeof(T), std::align_val_t(alignof(T))));
    if (size_) std::memcpy(static_cast<void*>(p), data_, size_ * sizeof(T));
    release();
    data_ = p;
    capacity_ = wanted;
  }

#if defined(__linux__)
  void* map(size_t bytes) const { return map_huge_aligned(bytes, true, advise_); }
  bool move_to(void* p, size_t bytes) {
    if (!p) return false;
    if (size_) std::memcpy(p, static_cast<const void*>(data_), size_ * sizeof(T));
    release();
    data_ = static_cast<T*>(p);
    mapped_bytes_ = bytes;
    return true;
  }
#endif

  void release() noexcept {
    if (!data_) return;
#if defined(__linux__)
    if (mapped_bytes_) {
      munmap(static_cast<void*>(data_), mapped_bytes_);
      mapped_bytes_ = 0;
      data_ = nullptr;
      capacity_ = 0;
      return;
    }
#endif
    ::operator delete(static_cast<void*>(data_), std::align_val_t(alignof(T)));
    data_ = nullptr;
    capacity_ = 0;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  size_t mapped_bytes_ = 0;  // the mapping's size when data_ is mapped, else 0
  bool advise_ = true;       // new mappings get MADV_HUGEPAGE
};

}  // namespace tprop
