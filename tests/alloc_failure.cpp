#include "alloc_failure.h"

#include <cstdlib>
#include <new>

namespace {

long g_allocations = 0;     // counted while armed
long g_fail_at = -1;        // the allocation that fails (counted from arming), -1: none
bool g_fail_after = false;  // and every one after it

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

void* operator new(size_t n) {
  if (g_fail_at >= 0) {
    const long k = g_allocations++;
    if (k == g_fail_at || (g_fail_after && k > g_fail_at)) throw std::bad_alloc();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// (GCC takes the free() of what this operator new returned for a mismatch.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
