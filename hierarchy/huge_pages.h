// Anonymous memory on a 2 MiB boundary, advised to be backed by transparent huge pages: what
// SlotVector's arrays and BlockPool's chunks are made of (one TLB entry covers 2 MiB of scattered
// accesses instead of 4 KiB). Linux only; elsewhere the callers use the ordinary heap.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>

namespace tprop {

inline constexpr size_t kHugePageBytes = size_t(2) << 20;

// `bytes` (a multiple of kHugePageBytes) mapped at a 2 MiB boundary, or nullptr. `reserve_only`:
// MAP_NORESERVE, address space that commits nothing until touched. `advise`: MADV_HUGEPAGE (only
// advice: plain pages where the kernel declines). Release with munmap(p, bytes).
inline void* map_huge_aligned(size_t bytes, bool reserve_only, bool advise) {
  // One huge page more than asked, trimmed at both ends to the aligned part.
  const size_t span = bytes + kHugePageBytes;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (reserve_only ? MAP_NORESERVE : 0);
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t base = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (base + kHugePageBytes - 1) & ~uintptr_t(kHugePageBytes - 1);
  if (aligned > base) munmap(p, aligned - base);
  const uintptr_t end = base + span, used_end = aligned + bytes;
  if (end > used_end) munmap(reinterpret_cast<void*>(used_end), end - used_end);
  if (advise) madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

}  // namespace tprop
#endif
