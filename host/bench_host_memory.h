// tprop_bench's host floor: how long this machine takes to bring a cache line in from memory at
// a random address, one at a time and with several in flight, measured in the same run as the
// frames. The host's share of a structural or world frame is mostly such lines (a few per edited
// entity: its record, its node in the depth order, its neighbours'), so its update times read as
// a number of lines at this floor; absolute host times move with the machine and its neighbours
// (this project's VM measured 170 to 390 ns a line alone within one day), ratios to a baseline of
// the same run do not (the guide's rule for figures).
#pragma once

#include <cstdint>
#include <vector>

#include "result.h"

namespace tprop::bench {

struct HostMemoryFloor {
  uint64_t bytes = 0;        // the buffer the lines are spread over
  uint32_t lines = 0;        // the lines the walks visit, one in `bytes / lines / 64`
  double latency_ns = 0;     // one line at a time: each address read from the line before
  double ns_per_line = 0;    // the best of the parallel walks: time / lines read
  uint32_t walks = 0;        // how many independent walks were in flight for ns_per_line
};

// A random cyclic permutation of [0, n) (Sattolo's algorithm): next[i] is the element after i,
// and following next from any element visits all n before coming back. Deterministic for a
// seed. n must be at least 2.
std::vector<uint32_t> random_cycle(uint32_t n, uint64_t seed);

// Spreads a random cycle of up to a million lines over `bytes` of 2 MiB-page memory (0: 256 MiB,
// about what a million entities' host arrays span; at least 4 MiB), writes it in order (every
// page in before the timing), then times walks along it: one walk (latency), and 4, 8, 16 and
// 32 walks side by side (the best of them: how many misses the core keeps in flight), each the
// best of three. The figures grow with `bytes` on a VM (this project's: 94 ns alone at 32 MiB,
// 165 at 256 MiB, 255 at 1 GiB; guest 2 MiB pages on the host's 4 KiB ones), so the report
// names it. About 0.1 to 0.3 s. An error when the memory cannot be had.
Result<HostMemoryFloor> measure_host_memory_floor(uint64_t bytes = 0);

}  // namespace tprop::bench
