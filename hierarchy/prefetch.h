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

// fetch_line: loads a byte of the line that holds p (which must be readable) and discards it.
// Hints do not always arrive in time: a world's ingest, each message's lines hinted 4 to 8
// messages before it was applied, still spent most of its time waiting on them in a frame after
// an evaluation had streamed through memory (now batched: DclWorld::stage). A load cannot come
// too late, and a loop of loads that do not depend on each other overlaps their misses, page
// walks included; it stalls the loop, so it belongs just before the work that needs the lines.
inline void fetch_line(const void* p) { (void)*static_cast<const volatile char*>(p); }

}  // namespace tprop
