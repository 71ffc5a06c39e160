// prefetch_line: starts loading the cache line that holds p, and returns at once.
//
// Every cache-miss-bound loop of tprop (a world's messages, the change lists, the level order's
// edits) asks for what it reads a few steps ahead, so that the misses of several steps overlap.
// Written as __builtin_prefetch, GCC 12 at -O2 may delete such a hint without a word: its
// pure-const analysis counts the builtin as no effect at all, so a small helper that only
// prefetches (IdHash::prefetch, once partial inlining had split its test from its body) was
// found pure, and a call of a pure function whose result goes unused is dead code. Every id-map
// hint of a world's creations and destructions was gone that way, and each look-up paid a full
// miss (10% of a world's ingest). An asm statement that the compiler must keep is an effect:
// no function holding one is pure. Elsewhere the builtin (the hint is only ever a hint).
#pragma once

namespace tprop {

inline void prefetch_line(const void* p) {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  // "m" names the line without reading it; prefetcht0 never faults, whatever p is.
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace tprop
