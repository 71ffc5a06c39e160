// SlotVector<T>: the std::vector of the per-entity arrays (the store's records, the depth
// order's nodes, the id map), backed by 2 MiB pages where Linux allows it.
//
// Why: a frame that changes a few thousand scattered entities of a million touches a few cache
// lines per entity in arrays of tens of megabytes. With 4 KiB pages nearly every one of those
// accesses also misses the TLB and walks the page tables; on the development VM (Linux with
// transparent huge pages in `madvise` mode, the default of many distributions) three scattered
// lines per entity of 10,000 entities took 0.5 ms with 4 KiB pages and 0.25 ms with 2 MiB pages.
// Allocations of at least 2 MiB are aligned to 2 MiB and advised MADV_HUGEPAGE; smaller ones,
// and other systems, get plain operator new. The kernel may still decline (no free huge pages):
// then the memory is ordinary, only slower.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tprop {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t(2) << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
#if defined(__linux__)
    if (bytes >= kHugePage) {
      const size_t rounded = (bytes + kHugePage - 1) & ~(kHugePage - 1);
      void* p = std::aligned_alloc(kHugePage, rounded);
      if (!p) throw std::bad_alloc();
      madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
      return static_cast<T*>(p);
    }
#endif
    return static_cast<T*>(::operator new(bytes, std::align_val_t(alignof(T))));
  }

  void deallocate(T* p, size_t n) noexcept {
#if defined(__linux__)
    if (n * sizeof(T) >= kHugePage) {
      std::free(p);
      return;
    }
#endif
    ::operator delete(p, std::align_val_t(alignof(T)));
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using SlotVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace tprop
