// tprop_bench's ceiling: how fast this device copies one of its buffers into another, measured
// in the same run as the frames, so that a frame's GB/s can be read as a share of what the
// device moves at best (README, Performance; the guide asks for ratios to a baseline of the same
// run, since absolute figures move with the machine and its clocks).
#pragma once

#include <cstdint>

#include "result.h"
#include "vk_context.h"

namespace tprop::bench {

struct CopyCeiling {
  double gb_per_s = 0;  // bytes read plus bytes written, per second: the faster way's
  uint64_t bytes = 0;   // the size of the copied buffer
  double ms = 0;        // one copy the faster way, the best of the timed ones
  bool by_shader = false;  // the faster way was the compute shader, not vkCmdCopyBuffer
  double command_gb_per_s = 0;  // each way's best
  double shader_gb_per_s = 0;
};

// Copies a device-local buffer of `bytes` (0: 256 MiB, 32 MiB on a CPU device, well beyond the
// caches; a multiple of 64 KiB) into another a few times with
// vkCmdCopyBuffer and a few times with a compute shader (shaders/bench_copy.comp: a driver may
// give the command to a copy engine slower than the shader cores), after one untimed copy each,
// with timestamps around each; the best copy counts. With `warm_ms` the GPU first copies for that
// long (host time), so the timed copies run at the clocks the frames of --warm-gpu see. An error
// when the queue has no timestamps or Vulkan fails.
Result<CopyCeiling> measure_copy_ceiling(const VulkanContext& context, uint32_t warm_ms,
                                         uint64_t bytes = 0);

}  // namespace tprop::bench
