#include "bench_host_memory.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <utility>

#include "huge_pages.h"

namespace tprop::bench {

namespace {

constexpr uint64_t kDefaultBytes = uint64_t(256) << 20;
constexpr uint64_t kLeastBytes = uint64_t(4) << 20;
constexpr uint32_t kMostLines = 1u << 20;  // 64 MiB of lines visited, a 4 MiB cycle to shuffle
constexpr uint32_t kLatencySteps = 20000;
constexpr uint32_t kParallelLines = 65536;  // lines read per timing of the parallel walks
constexpr uint32_t kMostWalks = 32;

volatile uint32_t walked_positions = 0;

// The lines' memory: 2 MiB pages where the kernel grants them, as the store's arrays get
// (SlotVector), so that the walks pay what the store's scattered accesses pay.
class LineBuffer {
 public:
  explicit LineBuffer(uint64_t bytes) : bytes_(bytes) {
#if defined(__linux__)
    data_ = static_cast<char*>(map_huge_aligned(bytes, false, true));
#else
    data_ = static_cast<char*>(::operator new(bytes, std::align_val_t(64), std::nothrow));
#endif
  }
  ~LineBuffer() {
    if (!data_) return;
#if defined(__linux__)
    munmap(data_, bytes_);
#else
    ::operator delete(data_, std::align_val_t(64));
#endif
  }
  LineBuffer(const LineBuffer&) = delete;
  LineBuffer& operator=(const LineBuffer&) = delete;
  char* data() const { return data_; }

 private:
  uint64_t bytes_;
  char* data_ = nullptr;
};

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// `walks` walks of `steps` lines each, side by side, starting evenly spaced along the buffer;
// the nanoseconds a line. `sink` keeps the loads from being optimised away.
double time_walks(const char* base, uint64_t stride, uint32_t lines, uint32_t walks,
                  uint32_t steps, uint32_t& sink) {
  uint32_t at[kMostWalks];
  for (uint32_t w = 0; w < walks; ++w) at[w] = uint32_t(uint64_t(w) * lines / walks);
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t s = 0; s < steps; ++s)
    for (uint32_t w = 0; w < walks; ++w) {
      uint32_t next;
      std::memcpy(&next, base + at[w] * stride, sizeof(next));
      at[w] = next;
    }
  const double ms = ms_since(start);
  for (uint32_t w = 0; w < walks; ++w) sink += at[w];
  return ms * 1e6 / (double(walks) * steps);
}

}  // namespace

std::vector<uint32_t> random_cycle(uint32_t n, uint64_t seed) {
  assert(n >= 2);
  std::vector<uint32_t> next(n);
  for (uint32_t i = 0; i < n; ++i) next[i] = i;
  std::mt19937_64 rng(seed);
  // Sattolo: swapping only with an earlier element leaves one cycle through all n.
  for (uint32_t i = n - 1; i > 0; --i) {
    const uint32_t j = uint32_t(rng() % i);
    std::swap(next[i], next[j]);
  }
  return next;
}

Result<HostMemoryFloor> measure_host_memory_floor(uint64_t bytes) {
  if (bytes == 0) bytes = kDefaultBytes;
  bytes = std::max(bytes, kLeastBytes) & ~uint64_t(kHugePageBytes - 1);
  HostMemoryFloor out;
  out.bytes = bytes;
  out.lines = uint32_t(std::min<uint64_t>(kMostLines, bytes / 64));
  const uint64_t stride = (bytes / out.lines) & ~uint64_t(63);
  std::vector<uint32_t> next;
  try {
    next = random_cycle(out.lines, 0x7470726f70ull);
  } catch (const std::bad_alloc&) {
    return Error{"out of host memory shuffling the host floor's lines"};
  }
  LineBuffer buffer(bytes);
  char* const base = buffer.data();
  if (!base) return Error{"no memory for the host floor's " + std::to_string(bytes >> 20) + " MiB"};
  // Written in order: every page comes in before the timing, and the cycle's links lie in the
  // lines themselves, so that a walk reads one random line a step and nothing else.
  for (uint32_t i = 0; i < out.lines; ++i)
    std::memcpy(base + i * stride, &next[i], sizeof(next[i]));

  uint32_t sink = 0;
  out.latency_ns = 1e300;
  out.ns_per_line = 1e300;
  for (int repeat = 0; repeat < 3; ++repeat) {
    out.latency_ns =
        std::min(out.latency_ns, time_walks(base, stride, out.lines, 1, kLatencySteps, sink));
    for (uint32_t walks = 4; walks <= kMostWalks; walks *= 2) {
      const double ns = time_walks(base, stride, out.lines, walks, kParallelLines / walks, sink);
      if (ns < out.ns_per_line) {
        out.ns_per_line = ns;
        out.walks = walks;
      }
    }
  }
  walked_positions = sink;  // the loads feed a volatile store: none can be left out
  return out;
}

}  // namespace tprop::bench
