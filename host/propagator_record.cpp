// Commands: the upload copies, the scatter of changed entities and the evaluation passes that
// record() puts into the caller's command buffer, and the internal command buffer that run() and
// read_back() submit and wait for.
#include "propagator_state.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <string>

#include "vk_barrier.h"
#include "vk_debug.h"

namespace tprop {

using namespace propagator_detail;

Status Propagator::Impl::create_commands() {
  VkCommandPoolCreateInfo cpci{};
  cpci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpci.queueFamilyIndex = s->queue_family;
  VkResult r = s->vk.vkCreateCommandPool(s->device, &cpci, nullptr, &pool);
  if (r != VK_SUCCESS) return Error{"creating a command pool failed: " + describe(r)};
  set_debug_name(*s, VK_OBJECT_TYPE_COMMAND_POOL, pool, "tprop.command_pool");
  VkCommandBufferAllocateInfo cbai{};
  cbai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cbai.commandPool = pool;
  cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbai.commandBufferCount = 1;
  r = s->vk.vkAllocateCommandBuffers(s->device, &cbai, &cmd);
  if (r != VK_SUCCESS) return Error{"allocating a command buffer failed: " + describe(r)};
  set_debug_name(*s, VK_OBJECT_TYPE_COMMAND_BUFFER, cmd, "tprop.commands");
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  r = s->vk.vkCreateFence(s->device, &fci, nullptr, &fence);
  if (r != VK_SUCCESS) return Error{"creating a fence failed: " + describe(r)};
  set_debug_name(*s, VK_OBJECT_TYPE_FENCE, fence, "tprop.fence");
  return ok_status();
}

Status Propagator::Impl::begin_internal(const char* what) {
  VkResult r = s->vk.vkResetCommandBuffer(cmd, 0);
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (r == VK_SUCCESS) r = s->vk.vkBeginCommandBuffer(cmd, &begin);
  if (r != VK_SUCCESS)
    return Error{std::string("beginning the command buffer for ") + what + " failed: " +
                 describe(r)};
  return ok_status();
}

Status Propagator::Impl::submit_internal_and_wait(const char* what) {
  VkResult r = s->vk.vkEndCommandBuffer(cmd);
  if (r != VK_SUCCESS)
    return Error{std::string("recording ") + what + " failed: " + describe(r)};
  VkCommandBufferSubmitInfo cbsi{};
  cbsi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO;
  cbsi.commandBuffer = cmd;
  VkSubmitInfo2 si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2;
  si.commandBufferInfoCount = 1;
  si.pCommandBufferInfos = &cbsi;
  r = s->vk.vkQueueSubmit2(s->queue, 1, &si, fence);
  if (r != VK_SUCCESS)
    return Error{std::string("submitting ") + what + " to the Vulkan queue failed: " + describe(r)};
  r = s->vk.vkWaitForFences(s->device, 1, &fence, VK_TRUE, UINT64_MAX);
  s->vk.vkResetFences(s->device, 1, &fence);
  if (r != VK_SUCCESS)
    return Error{std::string("waiting for ") + what + " on the GPU failed: " + describe(r)};
  return ok_status();
}

void Propagator::record(VkCommandBuffer cmd) {
  Impl& m = *impl_;
  const ContextState& s = *m.s;
  assert(m.packed && "record() needs a successful update() first");
  if (!m.packed) return;
  m.stats.upload_bytes = 0;
  m.stats.copy_regions = 0;
  m.stats.dispatches = 0;
  m.stats.grid_rows = 0;
  m.stats.jump_runs = 0;
  m.stats.scan_runs = 0;
  const uint32_t max_x = std::min(m.options.max_groups_per_dimension,
                                  s.properties.limits.maxComputeWorkGroupCount[0]);
  auto dispatch = [&](uint32_t groups) {
    m.stats.grid_rows = std::max(m.stats.grid_rows, dispatch_1d(s, cmd, groups, max_x));
    ++m.stats.dispatches;
  };

  begin_label(s, cmd, "tprop");
  m.timer.record_reset(cmd);
  m.timer.stamp(cmd, 0);

  // Upload. The previous frame's shaders may still read (WAR) or have written (WAW) these
  // buffers: order the copies after them.
  begin_label(s, cmd, "tprop.upload");
  barrier(s, cmd,
          {VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_2_COPY_BIT |
               VK_PIPELINE_STAGE_2_CLEAR_BIT,
           VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT},
          {VK_PIPELINE_STAGE_2_COPY_BIT | VK_PIPELINE_STAGE_2_CLEAR_BIT |
               VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
           VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_TRANSFER_READ_BIT |
               VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT});
  if (!m.piece_copies.empty()) {
    // Replaced pieces' contents into their successors, before anything else writes them.
    for (PieceCopy& c : m.piece_copies) {
      const VkBufferCopy region{0, 0, c.bytes};
      s.vk.vkCmdCopyBuffer(cmd, c.from.handle(), c.to->device[c.piece].handle(), 1, &region);
      ++m.stats.copy_regions;
      m.retired.push_back(std::move(c.from));  // freed by the next update(); room made there
    }
    m.piece_copies.clear();  // once: a second record() must not copy old values back
    barrier(s, cmd, kTransferWrite, {kTransferWrite.stage, kTransferWrite.access});
  }
  if (m.tables_pending) {
    const VkBufferCopy region{0, 0, m.tables_bytes};
    s.vk.vkCmdCopyBuffer(cmd, m.tables_staging.handle(), m.tables.handle(), 1, &region);
    ++m.stats.copy_regions;
    m.tables_pending = false;
  }
  if (m.full_upload) {
    for (int a = 0; a < kArrays; ++a)
      if (m.mirrors(Array(a))) m.copy(cmd, m.arrays[a], Range{0, m.slots});  // else written in place
    m.cleared_slots = m.zeroed_clears ? m.slot_capacity : 0;  // zeroed by update()'s helper
  }
  // Slots without an entity read as zeros (a full upload clears them all, growth the new ones);
  // the passes write every live one. No mark of a fresh slot matches a frame number.
  if (m.cleared_slots < m.slot_capacity) {
    m.fill_zero(cmd, m.world, m.cleared_slots, m.slot_capacity);
    m.fill_zero(cmd, m.dirty, m.cleared_slots, m.slot_capacity);
    m.cleared_slots = m.slot_capacity;
  }
  m.copy(cmd, m.rare, m.dirty_rare);
  m.copy(cmd, m.order_list, m.dirty_order);
  if (m.use_work_list && !m.steps.empty())
    m.copy(cmd, m.work_list, Range{0, m.stats.evaluated_entities});
  const uint32_t order_pairs = static_cast<uint32_t>(m.order_changes.size() / 2);
  // Only a table planned this frame: a values frame that reuses the last plan finds it there
  // (8 bytes a level: 8 MB a frame for a 1M chain).
  if (m.levels_pending) m.copy(cmd, m.levels, Range{0, m.levels_used});
  if (m.value_count) m.copy(cmd, m.value_deltas, Range{0, m.value_count});
  if (m.delta_count) m.copy(cmd, m.deltas, Range{0, m.delta_count});
  // The fused steps' counters start at zero in every record() (a second one evaluates again).
  const uint32_t progress_words = m.progress_words();
  if (progress_words)
    s.vk.vkCmdFillBuffer(cmd, m.progress.handle(), 0, VkDeviceSize(progress_words) * 4, 0);
  barrier(s, cmd, kTransferWrite, kComputeReadWrite);
  // 0 is what a fresh mark holds; numbers stay below 2^31, the run marks of pointer jumping.
  m.frame_number = m.next_frame_number();
  // Set 0 also holds the texel views that device addresses read beside (AddressTexels); the
  // scatters read none.
  auto bind_set = [&](int which) {
    if (storage_addressing(m.addressing) == Addressing::Descriptors ||
        (which == 0 && reads_texels(m.addressing)))
      s.vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m.pipes.layout(), 0, 1,
                                   &m.descriptor_sets[which], 0, nullptr);
  };
  if (m.value_count + m.delta_count + order_pairs) {
    bind_set(1);
    gpu::ScenePush scatter = m.push_constants(1);
    scatter.frame = m.frame_number;
    auto run = [&](Pass pass, uint32_t count) {
      scatter.count = count;
      s.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                             m.pipes.get(pass, storage_addressing(m.addressing),
                                         m.output_features()));
      m.pipes.push(cmd, scatter);
      dispatch((count + gpu::kScatterGroupSize - 1) / gpu::kScatterGroupSize);
    };
    // The values alone, then whole entities and the order changes (into the order whatever list
    // the passes follow); a slot in both gets the same values twice, in this order.
    if (m.value_count) run(Pass::ScatterValues, m.value_count);
    if (m.delta_count + order_pairs) {
      if (m.value_count) barrier(s, cmd, kComputeWrite, kComputeReadWrite);
      scatter.first = m.level_count;
      scatter.aux = m.delta_count;
      run(Pass::Scatter, m.delta_count + order_pairs);
    }
  }
  bind_set(0);
  gpu::ScenePush push = m.push_constants(0);
  push.frame = m.frame_number;
  // 3: most entities change, so the wide passes' stores through shared memory pay (propagate.comp).
  push.aux = !m.skip_unchanged ? 0u : m.mostly_changed ? 3u : 1u;
  end_label(s, cmd);
  m.timer.stamp(cmd, 1);

  begin_label(s, cmd, "tprop.evaluate");
  const Pass narrow = m.narrow_pass();
  VkPipeline bound = VK_NULL_HANDLE;
  VkDeviceAddress progress = progress_words ? m.progress.address() : 0;
  for (const Step& step : m.steps) {
    // Each level reads what the previous dispatch (or the scatter) wrote.
    barrier(s, cmd, kComputeWrite, kComputeReadWrite);
    auto bind = [&](VkPipeline p) {
      if (p == bound) return;
      s.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
      bound = p;
    };
    // Pointer jumping and the scans: by device address, in the variant update() prepared for
    // this step, with their scratch at pc.deltas and, in a frame that skips the unchanged, the
    // frame number's top bit set (they carry dirty bits).
    auto by_address = [&](Pass p) {
      return m.pipes.get(p, Addressing::DeviceAddress, step.features);
    };
    auto scratch_push = [&](uint32_t count, uint32_t aux) {
      gpu::ScenePush q = push;
      q.deltas = m.jump.address();
      q.first = step.first;
      q.count = count;
      q.aux = aux;
      if (m.skip_unchanged) q.frame |= 0x80000000u;
      return q;
    };
    if (step.kind == Step::Jump) {
      // Index, init, ceil(log2(levels)) rounds, write: each reads what the one before wrote.
      gpu::ScenePush j = scratch_push(step.entities, step.count);
      const uint32_t groups = (step.entities + gpu::kWideGroupSize - 1) / gpu::kWideGroupSize;
      bind(by_address(Pass::JumpIndex));
      m.pipes.push(cmd, j);
      dispatch(groups);
      barrier(s, cmd, kComputeWrite, kComputeReadWrite);
      bind(by_address(Pass::JumpInit));
      dispatch(groups);
      uint32_t rounds = 0;
      while ((uint64_t(1) << rounds) < step.count) ++rounds;
      bind(by_address(Pass::JumpRound));
      for (uint32_t r = 0; r < rounds; ++r) {
        barrier(s, cmd, kComputeWrite, kComputeReadWrite);
        j.aux = r & 1u;
        m.pipes.push(cmd, j);
        dispatch(groups);
      }
      barrier(s, cmd, kComputeWrite, kComputeReadWrite);
      bind(by_address(Pass::JumpWrite));
      j.aux = rounds & 1u;
      m.pipes.push(cmd, j);
      dispatch(groups);
      ++m.stats.jump_runs;
      continue;
    }
    if (step.kind == Step::Scan) {
      // Reduce, carry, write: each reads what the one before wrote (scan.comp).
      const gpu::ScenePush q = scratch_push(step.count, step.entities);
      // A workgroup per tile of P positions, then one per position (scene_layout.h).
      const uint32_t tile_groups = gpu::scan_tile_groups(step.entities, step.count);
      bind(by_address(Pass::ScanReduce));
      m.pipes.push(cmd, q);
      dispatch(tile_groups);
      barrier(s, cmd, kComputeWrite, kComputeReadWrite);
      bind(by_address(Pass::ScanCarry));
      dispatch(step.entities);
      barrier(s, cmd, kComputeWrite, kComputeReadWrite);
      bind(by_address(Pass::ScanWrite));
      dispatch(tile_groups);
      ++m.stats.scan_runs;
      continue;
    }
    if (step.kind == Step::Fused) {
      bind(m.pipes.get(Pass::Fused, m.addressing, step.features));
      gpu::ScenePush f = push;
      f.deltas = progress;  // this step's counters (evaluate() reads no deltas)
      f.first = step.first;
      f.count = step.count;
      m.pipes.push(cmd, f);
      dispatch(step.entities);
      progress += VkDeviceAddress(1 + step.count) * 4;
      continue;
    }
    const Pass pass = step.kind == Step::Narrow   ? narrow
                      : step.kind == Step::Chain  ? Pass::Chain
                      : step.kind == Step::Bundle ? Pass::Bundle
                      : step.kind == Step::Climb  ? Pass::Climb
                                                  : Pass::Wide;
    bind(m.pipes.get(pass, m.addressing, step.features));
    push.first = step.first;
    push.count = step.count;
    m.pipes.push(cmd, push);
    // Wide: an invocation per entry; bundle: one per chain; climb: a workgroup per chunk; the
    // walks: one workgroup.
    const uint32_t groups =
        step.kind == Step::Wide     ? (step.count + gpu::kWideGroupSize - 1) / gpu::kWideGroupSize
        : step.kind == Step::Bundle ? (step.entities + gpu::kNarrowGroupSize - 1) / gpu::kNarrowGroupSize
        : step.kind == Step::Climb  ? step.entities
                                    : 1;
    dispatch(groups);
  }
  end_label(s, cmd);
  m.timer.stamp(cmd, 2);
  // The next update() may write values in place (ValueWrites) over what this frame's passes
  // and copies wrote: their writes made available to the host first.
  if (m.in_place)
    barrier(s, cmd, {kComputeWrite.stage | kTransferWrite.stage,
                     kComputeWrite.access | kTransferWrite.access}, kHostWrite);
  end_label(s, cmd);
  m.timer.recorded_ = true;

  // Uploaded: a second record() of the same update() copies and scatters nothing again (and
  // with a new frame number, a pass skipping the unchanged recomputes nothing).
  m.full_upload = false;
  m.dirty_order.clear();
  m.order_changes.clear();
  m.dirty_rare.clear();
  m.value_count = 0;
  m.delta_count = 0;
  m.levels_pending = false;
  m.recorded = true;
}

Status Propagator::run(EntityStore& store) {
  if (Status st = update(store); !st) return st;
  return run_staged(store);
}

Status Propagator::run_staged(EntityStore& store) {
  Impl& m = *impl_;
  if (Status st = m.begin_internal("the frame"); !st) return st;
  record(m.cmd);
  if (Status st = m.submit_internal_and_wait("the frame"); !st) return st;
  // The frame has completed: a full upload's mirrors are not read again, so they go now rather
  // than at the next update() (a scene of 10^8 entities holds 6.4 GB in them).
  if (m.release_mirrors(true)) {
    m.count_buffers();
    m.stats.staging_bytes = m.buffer_stats.staging_bytes;
    m.stats.mirror_bytes = m.buffer_stats.mirror_bytes;
  }
  store.mark_statics_baked();
  return ok_status();
}

Result<std::vector<float4x4>> Propagator::read_back() {
  Impl& m = *impl_;
  const ContextState& s = *m.s;
  const uint32_t n = m.slots;
  // 64 bytes a slot on the host: 640 MB at 10 million.
  std::vector<float4x4> out;
  try {
    out.assign(n, float4x4(0.0f));
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("out of host memory reading back the LocalToWorld matrices");
  }
  if (n == 0 || !m.world) return out;
  // Piece by piece through one host-visible buffer the size of a piece (of the scene when it
  // is one piece): a submit each, so host-visible memory never holds more than one piece.
  const VkDeviceSize stride = m.world.stride;  // the output layout's (64 or 48)
  const VkDeviceSize most = VkDeviceSize(std::min(m.world.size_of(0), n)) * stride;
  if (m.readback.size() < most) {
    m.readback.reset();  // before the next one: both might not fit
    auto b = Buffer::create(s, most, BufferKind::Readback, "tprop.readback");
    if (!b) return b.error();
    m.readback = std::move(*b);
  }
  for (uint32_t p = 0; p < m.world.pieces() && m.world.first_of(p) < n; ++p) {
    const uint32_t first = m.world.first_of(p);
    const uint32_t count = std::min(m.world.size_of(p), n - first);
    const VkDeviceSize bytes = VkDeviceSize(count) * stride;
    if (Status st = m.begin_internal("the read-back"); !st) return st.error();
    begin_label(s, m.cmd, "tprop.read_back");
    barrier(s, m.cmd, kComputeWrite, kTransferRead);
    const VkBufferCopy region{0, 0, bytes};
    s.vk.vkCmdCopyBuffer(m.cmd, m.world.device[p].handle(), m.readback.handle(), 1, &region);
    barrier(s, m.cmd, kTransferWrite, kHostRead);
    end_label(s, m.cmd);
    if (Status st = m.submit_internal_and_wait("the read-back"); !st) return st.error();
    m.readback.invalidate();
    if (!m.affine_output()) {
      std::memcpy(out.data() + first, m.readback.mapped(), bytes);
      continue;
    }
    // Rows to a float4x4 with its last row (0, 0, 0, 1); a slot the order does not hold (no
    // live entity) reads as zeros, as in the Float4x4 layout (its 48 bytes are zeros too).
    const auto* rows = static_cast<const gpu::Affine3x4*>(m.readback.mapped());
    for (uint32_t k = 0; k < count; ++k)
      if (m.order.level_of(first + k) != LevelOrder::kNone)
        out[first + k] = gpu::affine3x4_to_mat4(rows[k]);
  }
  return out;
}

}  // namespace tprop
