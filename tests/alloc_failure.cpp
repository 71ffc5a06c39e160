#include "alloc_failure.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace {

// Per thread: only the arming thread's allocations count and fail. (lavapipe compiles some
// shader variants on its own threads while a submission runs; those are the driver's, and a
// failure made there would bring the process down, not test tprop.)
thread_local long g_allocations = 0;     // counted while armed
thread_local long g_fail_at = -1;        // the allocation that fails (from arming), -1: none
thread_local bool g_fail_after = false;  // and every one after it

}  // namespace

namespace tprop::alloc_failure {

void arm(long k, bool after) {
  g_allocations = 0;
  g_fail_after = after;
  g_fail_at = k;
}
void disarm() { g_fail_at = -1; }
long count() { return g_allocations; }

}  // namespace tprop::alloc_failure

namespace {

// Whether this allocation fails, counting it while armed.
bool fails_now() {
  if (g_fail_at < 0) return false;
  const long k = g_allocations++;
  return k == g_fail_at || (g_fail_after && k > g_fail_at);
}

}  // namespace

void* operator new(size_t n) {
  if (fails_now()) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// The aligned form too: SlotVector's small arrays (the store's records, id maps) come from it.
void* operator new(size_t n, std::align_val_t alignment) {
  if (fails_now()) throw std::bad_alloc();
  const size_t a = std::max(size_t(alignment), sizeof(void*));
  if (void* p = std::aligned_alloc(a, (std::max<size_t>(n, 1) + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer comes from one): failing, they
// return null; their memory is freed by the operator delete below, so it must be malloc's.
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  if (fails_now()) return nullptr;
  return std::malloc(n ? n : 1);
}
void* operator new(size_t n, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  if (fails_now()) return nullptr;
  const size_t a = std::max(size_t(alignment), sizeof(void*));
  return std::aligned_alloc(a, (std::max<size_t>(n, 1) + a - 1) / a * a);
}
// (GCC takes the free() of what this operator new returned for a mismatch.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
