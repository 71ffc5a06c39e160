// tprop_bench's ceiling copy (shaders/bench_copy.comp, host/bench_ceiling.cpp): a compute shader
// that copies one device buffer into another, 16 bytes an invocation per step of a grid-stride
// loop, the way the passes move memory (vkCmdCopyBuffer may run on a copy engine, which on an
// NVIDIA H100 moved 848 GB/s where the passes reached about 2 TB/s). Included by GLSL and C++.
#ifndef TPROP_BENCH_COPY_H
#define TPROP_BENCH_COPY_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
namespace tprop::gpu {
using uint = uint32_t;
#define TPROP_CONST inline constexpr uint32_t
#else
#define TPROP_CONST const uint
#endif

TPROP_CONST kCopyGroupSize = 256u;

// Push constants: the two buffers' device addresses and the copy's size in 16-byte elements;
// invocation i copies elements i, i + stride, i + 2 * stride, ...
struct CopyPush {
  uint64_t from;
  uint64_t to;
  uint count;
  uint stride;
};

#ifdef __cplusplus
static_assert(sizeof(CopyPush) == 24);
static_assert(offsetof(CopyPush, from) == 0);
static_assert(offsetof(CopyPush, to) == 8);
static_assert(offsetof(CopyPush, count) == 16);
static_assert(offsetof(CopyPush, stride) == 20);
}  // namespace tprop::gpu
#endif
#undef TPROP_CONST

#endif  // TPROP_BENCH_COPY_H
