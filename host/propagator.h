// The application-facing GPU API: a Propagator keeps an EntityStore's scene on the GPU and
// computes every LocalToWorld there, the same results as CpuReference (hierarchy/reference.h).
//
// A frame:
//   propagator.update(store);      // takes store.take_changes(), re-sorts only on hierarchy
//                                  // changes, stages only what changed
//   propagator.record(cmd);        // upload copies, compose, propagate: no submit, no wait
//   ... submit cmd, and before the next update() make sure it has completed ...
//   store.mark_statics_baked();
// or simply `propagator.run(store)`, which does all of it and waits.
//
// Size limit: each array is one buffer in one allocation, the largest being LocalToWorld at 64
// bytes an entity, so a scene holds up to maxMemoryAllocationSize / 64 entities (lavapipe: 2 GiB,
// 33 million; ten million need 640 MB); beyond that update() returns an error naming the buffer.
//
// The context must outlive the Propagator. update() rewrites the staging memory that the
// previously recorded command buffer copies from, so the caller must have waited for that
// command buffer (fence, timeline semaphore or vkQueueWaitIdle) before calling update() again.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <vulkan/vulkan.h>

#include "depth_order.h"
#include "entity_store.h"
#include "gpu_timer.h"
#include "math.h"
#include "result.h"
#include "vk_context.h"

namespace tprop {

// Where the LocalToWorld results live after the recorded commands: `range / stride` float4x4,
// column-major, 64-byte stride, indexed by depth-sorted position (order().slot[pos] is the store
// slot, store.id_at(slot) the entity). They were last written by `written_stage` with
// `written_access`: a renderer that reads them as instance data (vertex input or a storage
// buffer) records a barrier from (written_stage, written_access) to its own stage and access,
// e.g. VK_PIPELINE_STAGE_2_VERTEX_ATTRIBUTE_INPUT_BIT / VK_ACCESS_2_VERTEX_ATTRIBUTE_READ_BIT.
// The buffer has STORAGE_BUFFER, TRANSFER_SRC/DST and SHADER_DEVICE_ADDRESS usage (not
// VERTEX_BUFFER: bind it as a storage buffer or read it through `address`; a range beyond the
// device's maxStorageBufferRange, 128 MiB or 2 million entities on lavapipe, must be bound in
// parts or read through `address`). It stays valid until the next update() that changes the
// hierarchy. The next frame's record() writes it again
// from COMPUTE_SHADER: the renderer's reads must be ordered before that (same queue: a barrier
// from its read stage to VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT; another queue: a semaphore).
struct OutputBinding {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
  VkDeviceSize stride = sizeof(float4x4);
  VkDeviceAddress address = 0;
  VkPipelineStageFlags2 written_stage = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
  VkAccessFlags2 written_access = VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT;
};

// What the last update() staged and the last record() recorded (for tests and tools).
struct FrameStats {
  bool resorted = false;              // the hierarchy changed: sorted and packed anew
  uint32_t entities = 0;
  uint32_t levels = 0;
  uint32_t staged_entities = 0;       // entities whose bytes were staged this frame
  uint64_t upload_bytes = 0;          // bytes the recorded copies move
  uint32_t copy_regions = 0;
  uint32_t dispatches = 0;            // compose + propagate dispatches recorded
  uint32_t grid_rows = 0;             // most workgroup rows (y) of one dispatch: > 1 is a 2D grid
  bool descriptors = false;           // the passes used descriptors (else device addresses)
  uint32_t windows = 0;               // windowed passes: windows of positions bound (else 0)
};

struct PropagatorOptions {
  // The passes reach the arrays through one descriptor per array whenever every array fits in
  // one binding (maxStorageBufferRange; 128 MiB, about 2 million entities, on lavapipe) and the
  // device allows 12 storage buffers per stage: measured 3 to 4 times faster on lavapipe. In
  // larger scenes compose and wide propagate reach each entity's own arrays through descriptors
  // over windows of positions, and parents and the rare tables by buffer device address, which
  // has no size limit. `false` here: device addresses for everything.
  bool prefer_descriptors = true;
  // Positions per window of those larger scenes; 0: as many as maxStorageBufferRange allows for
  // a float4x4 (lavapipe: 2,097,152). Rounded down to a multiple of 4096 (at least 4096), so
  // that every binding offset is aligned. Tests set it low to run windows on a small scene.
  uint32_t window_entities = 0;
  // A dispatch of more workgroups than this puts the rest in rows along y (a 2D grid the
  // shaders flatten). The default is the least maxComputeWorkGroupCount[0] Vulkan guarantees,
  // first exceeded by a pass over 16.7 million entities; tests lower it (at least 1) to run the
  // 2D grid on small scenes. The device's own limit caps it too.
  uint32_t max_groups_per_dimension = 65535;
};

class Propagator {
 public:
  static Result<Propagator> create(const VulkanContext& context,
                                   const PropagatorOptions& options = {});

  Propagator(Propagator&&) noexcept;
  Propagator& operator=(Propagator&&) noexcept;
  Propagator(const Propagator&) = delete;
  Propagator& operator=(const Propagator&) = delete;
  ~Propagator();

  // Takes the store's changes and stages them. Errors: out of memory, a scene beyond the
  // device's limits; the Propagator then packs everything again on the next update(). Each
  // update() is meant to be followed by one record() (an update() whose frame was never
  // recorded makes the next one pack everything again).
  Status update(EntityStore& store);
  // Records the upload copies, compose and propagation of the last update() into `cmd` (a
  // primary command buffer in the recording state, for a queue of the context's family). It
  // binds its own compute pipelines, descriptor set 0 and push constants: the caller's compute
  // bindings are not preserved. The recorded commands are meant for one submission before the
  // next update(), which may rewrite the descriptor set they use.
  void record(VkCommandBuffer cmd);
  // update + record into an internal command buffer + submit + wait + store.mark_statics_baked().
  Status run(EntityStore& store);

  OutputBinding output() const;
  // The depth order of the last update(): position -> slot, parent positions, levels.
  const DepthOrder& order() const;
  // Copies LocalToWorld back (by position), submitting and waiting on the context's queue. Call
  // after the recorded frame has completed (run() guarantees it).
  Result<std::vector<float4x4>> read_back();
  // GPU times of the last recorded frame, once it has completed.
  Result<StageTimes> stage_times() const;
  const FrameStats& last_frame() const;

 private:
  struct Impl;
  explicit Propagator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tprop
