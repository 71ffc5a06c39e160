// tprop_bench's ceiling: how fast this device copies one of its buffers into another, measured
// in the same run as the frames, so that a frame's GB/s can be read as a share of what the
// device moves at best (README, Performance; the guide asks for ratios to a baseline of the same
// run, since absolute figures move with the machine and its clocks).
#pragma once

#include "result.h"
#include "vk_context.h"

namespace tprop::bench {

struct CopyCeiling {
  double gb_per_s = 0;  // bytes read plus bytes written, per second
  uint64_t bytes = 0;   // the size of the copied buffer
  double ms = 0;        // one copy, the best of the timed ones
};

// Copies a device-local buffer (256 MiB, 32 MiB on a CPU device) into another a few times,
// after one untimed copy, with timestamps around each; the best copy counts. An error when the
// queue has no timestamps or Vulkan fails.
Result<CopyCeiling> measure_copy_ceiling(const VulkanContext& context);

}  // namespace tprop::bench
