// For the out-of-memory tests (their own binary, oom_tests): a replaced global operator new that
// fails on demand, counting allocations while armed: those of the thread that armed it.
#pragma once

namespace tprop::alloc_failure {

// Allocation k from now (on this thread) fails (and, with `after`, every later one) until disarm(). k may be
// LONG_MAX to count without failing.
void arm(long k, bool after);
void disarm();
// Allocations since arm().
long count();

}  // namespace tprop::alloc_failure
