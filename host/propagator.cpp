// The Propagator's lifetime and frame logic: create, update (the depth order updated where the
// hierarchy changed, everything or only what changed packed) and the output. The work itself
// lives by concept beside it: propagator_staging.cpp, propagator_plan.cpp,
// propagator_bindings.cpp, propagator_record.cpp (see propagator_state.h).
#include "propagator_state.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <new>

namespace tprop {

using gpu::kNoIndex;

static_assert(PropagatorOptions{}.max_groups_per_dimension == gpu::kMaxGroupsPerDimension);

Propagator::Impl::~Impl() {
  if (!s) return;
  if (fence) s->vk.vkDestroyFence(s->device, fence, nullptr);
  for (VkBufferView v : texel_views)
    if (v) s->vk.vkDestroyBufferView(s->device, v, nullptr);
  if (descriptor_pool) s->vk.vkDestroyDescriptorPool(s->device, descriptor_pool, nullptr);
  if (pool) s->vk.vkDestroyCommandPool(s->device, pool, nullptr);
}

Propagator::Propagator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Propagator::Propagator(Propagator&&) noexcept = default;
Propagator& Propagator::operator=(Propagator&&) noexcept = default;
Propagator::~Propagator() = default;

Result<Propagator> Propagator::create(const VulkanContext& context,
                                      const PropagatorOptions& options) {
  // Host memory running out while it is made (its tables, the pipelines' names) is an error.
  return guard_host_memory("out of host memory creating a Propagator",
                           [&] { return create_unguarded(context, options); });
}

Result<Propagator> Propagator::create_unguarded(const VulkanContext& context,
                                                const PropagatorOptions& options) {
  auto impl = std::make_unique<Impl>();
  const ContextState& s = context.state();
  impl->s = &s;
  impl->options = options;
  assert(options.max_groups_per_dimension >= 1 && "a dispatch needs at least one group along x");
  impl->options.max_groups_per_dimension = std::max(options.max_groups_per_dimension, 1u);
  // Every buffer at most this size: the device's limits, or the option's smaller cap.
  VkDeviceSize cap = s.max_allocation_size;
  if (s.max_buffer_size) cap = std::min(cap, s.max_buffer_size);
  if (options.max_buffer_bytes) cap = std::min<VkDeviceSize>(cap, options.max_buffer_bytes);
  impl->max_buffer_bytes = std::max<VkDeviceSize>(cap, kMinBufferBytes);
  impl->init_pieced_arrays();
  auto pipes = ComputePipelines::create(s);
  if (!pipes) return pipes.error();
  impl->pipes = std::move(*pipes);
  if (Status st = impl->create_descriptor_set(); !st) return st.error();
  auto timer = GpuTimer::create(s);
  if (!timer) return timer.error();
  impl->timer = std::move(*timer);
  if (Status st = impl->create_commands(); !st) return st.error();
  return Propagator(std::move(impl));
}

namespace {
using Clock = std::chrono::steady_clock;
// Milliseconds from `since` to now, and `since` moved to now: consecutive stages, one read each.
double lap_ms(Clock::time_point& since) {
  const Clock::time_point now = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - since).count();
  since = now;
  return ms;
}
}  // namespace

Status Propagator::update(EntityStore& store) {
  // Host memory running out (std::bad_alloc from the order's, the plan's or the staging's
  // bookkeeping) is an error the caller gets, not an exception: the frame is dropped, and the
  // next update() packs the whole scene again, as after any failed frame.
  try {
    return impl_->update_frame(store);
  } catch (const std::bad_alloc&) {
    try {
      impl_->abandon_frame(true);  // nothing reached the GPU: the frozen table holds
    } catch (const std::bad_alloc&) {
      // Describing the buffers ran out too: the frame is dropped all the same (abandon_frame()
      // drops it first), and the next update() describes them.
    }
    return out_of_memory_error(
        "out of host memory in update(); the next update() packs the whole scene again");
  }
}

Status Propagator::Impl::update_frame(EntityStore& store) {
  Impl& m = *this;
  Clock::time_point lap = Clock::now();
  StoreChanges changes = store.take_changes();
  m.stats = FrameStats{};
  FrameStats::HostTimes& host = m.stats.host;
  host.take_changes_ms = lap_ms(lap);
  // Whatever path update() leaves by, the prefaulting a full upload starts is done by then.
  struct FinishPrefaulting {
    Impl& m;
    ~FinishPrefaulting() { m.finish_prefaulting(); }
  } finish_prefaulting{m};
  if (m.packed && !m.recorded) {
    // The previous update() was never recorded: its staged changes and its Statics' first values
    // never reached the GPU. Pack everything again, computing those Statics anew.
    for (uint32_t slot : m.pending_statics)
      if (slot < m.side.size() && m.side[slot].static_index != kNoIndex)
        m.static_valid[m.side[slot].static_index] = 0;
    m.packed = false;
  }
  // The last frame's Statics, computed by its recorded frame, go out of the member list, which
  // from here on lists this frame's alone: should the frame fail, those are what abandon_frame()
  // marks as not computed. (Baked now, they are packed again: incremental_pack().)
  std::vector<uint32_t> computed_statics = std::move(m.pending_statics);
  m.pending_statics.clear();
  m.recorded = false;
  if (store.identity() != m.last_store) {
    // The frozen table holds the last store's Statics, by slot: this store's were never
    // computed here, so each is computed once more (CpuReference's rule for a backend that never
    // computed a baked Static), not read frozen from another scene's values.
    m.packed = false;
    std::fill(m.static_valid.begin(), m.static_valid.end(), 0);
  }
  m.last_store = store.identity();
  // The frame that copied from them has completed (update() contract); a copy never recorded
  // (an update() without its record()) stays for the next record().
  m.retired.clear();
  // Still packed: the last update() was recorded and its frame has completed, a full upload's
  // copies included, and this frame sends deltas. A full pack instead reuses what mirrors there
  // are (one never recorded wrote them and did not copy them yet). Freed on the reclaimer's
  // thread: here they cost the frame after a full upload 2 ms at 1M, 35 ms at 10M on lavapipe,
  // and on an NVIDIA H200 1 to 37 ms for each of the seven frames that freed one buffer each.
  if (m.packed) m.release_mirrors(false);
  m.stats.hierarchy_changed = changes.hierarchy;
  m.stats.structural_changes = static_cast<uint32_t>(changes.structural.size());
  Status st = ok_status();
  // plan_work(), at the end of either pack, adds its own time to host.plan_ms.
  if (!m.packed) {
    m.order.rebuild(store);
    host.order_ms = lap_ms(lap);
    st = m.full_pack(store);
  } else {
    m.order.take_moved();
    // Only beside structural edits (every slot a creation adds is listed): a frame of values
    // alone (most of a game's) or of nothing leaves the order as it is, and pays nothing for the
    // slack earlier frames left.
    if (!changes.structural.empty()) {
      m.order.apply(store, changes.structural);
      host.order_ms = lap_ms(lap);
      m.order.compact(store, m.options.compact_per_frame);
      m.stats.slot_ordered_entities =
          m.order.restore_slot_order(m.slot_order_divisor(), m.options.slot_order_min_entries);
      host.compact_ms = lap_ms(lap);
    }
    m.stats.compacted_entities = m.order.compacted();
    m.stats.slack_entities = static_cast<uint32_t>(m.order.slack_queued());
    st = m.incremental_pack(store, changes, computed_statics);
  }
  host.pack_ms = lap_ms(lap) - host.plan_ms;
  // A scene the Affine3x4 output cannot hold: refused after packing (which counted what every
  // entity carries) and before anything is recorded.
  bool refused = false;
  if (st) {
    st = m.check_affine_output(store);
    refused = !st;
  }
  if (st) {
    st = m.choose_addressing();
    if (st) st = m.prepare_passes();  // the pipeline variants record() binds
    if (st) {
      // The device-address passes, and pointer jumping and scans always, find the pieces
      // through the tables.
      const bool jumps = std::any_of(m.steps.begin(), m.steps.end(), [](const Impl::Step& step) {
        return step.kind == Impl::Step::Jump || step.kind == Impl::Step::Scan;
      });
      if (storage_addressing(m.addressing) == Addressing::DeviceAddress || jumps)
        st = m.build_piece_tables();
    }
  }
  host.plan_ms += lap_ms(lap);
  if (!st) {
    // Refused, packing completed and no buffer was replaced; else a growth may have replaced
    // the frozen table's pieces.
    m.abandon_frame(refused);
    return st;
  }
  // record() retires the replaced pieces it copies from, and must not allocate to do so.
  m.retired.reserve(m.retired.size() + m.piece_copies.size());
  m.packed = true;
  m.describe_buffers();
  m.stats.slot_pieces = m.buffer_stats.slot_pieces;
  m.stats.device_buffers = m.buffer_stats.device_buffers;
  m.stats.device_bytes = m.buffer_stats.device_bytes;
  m.stats.staging_bytes = m.buffer_stats.staging_bytes;
  m.stats.mirror_bytes = m.buffer_stats.mirror_bytes;
  m.stats.largest_buffer_bytes = m.buffer_stats.largest_buffer_bytes;
  m.stats.descriptors = storage_addressing(m.addressing) == Addressing::Descriptors;
  m.stats.texel_reads = reads_texels(m.addressing);
  m.stats.in_place_arrays = m.in_place;
  m.stats.in_place_inputs = m.packs_in_place;
  m.stats.shared_wide_stores = m.shared_wide_stores();
  m.stats.word_stores = m.word_stores();
  m.stats.slot_order = m.slot_order_divisor() != 0;
  m.stats.entities = m.order.size();
  m.stats.levels = m.order.level_count();
  return ok_status();
}

void Propagator::Impl::abandon_frame(bool frozen_intact) {
  packed = false;  // pack everything again next time
  order.clear();
  if (frozen_intact) {
    // The Statics this frame marked as computed are the pending ones (pack() lists a Static
    // before it marks it): those alone are computed again (as after an update() that was never
    // recorded); the values frozen earlier stay.
    for (uint32_t slot : pending_statics)
      if (slot < side.size() && side[slot].static_index != kNoIndex)
        static_valid[side[slot].static_index] = 0;
  } else {
    // Statics marked as computed by this failed frame were not: compute every Static again.
    std::fill(static_valid.begin(), static_valid.end(), 0);
  }
  full_upload = false;
  dirty_rare.clear();
  dirty_order.clear();
  order_changes.clear();
  value_count = 0;
  delta_count = 0;
  steps.clear();
  describe_buffers();  // the buffers as they are now: a growth may have replaced some
}

OutputBinding Propagator::output() const {
  const Impl& m = *impl_;
  OutputBinding out;
  if (m.world) {
    out.buffer = m.world.device[0].handle();
    out.address = m.world.device[0].address();
  }
  if (!m.output_pieces.empty()) out.range = m.output_pieces[0].range;
  out.stride = m.world.stride;
  out.layout = m.options.output_layout;
  out.pieces = m.output_pieces;
  out.slots_per_piece = uint32_t(1) << m.slot_shift;
  return out;
}

const LevelOrder& Propagator::order() const { return impl_->order; }
const FrameStats& Propagator::last_frame() const { return impl_->stats; }
// Its errors are messages longer than a string holds in place: out of host memory, building
// one would throw through the API (an application polling before the frame completes takes
// that path every frame).
Result<StageTimes> Propagator::stage_times() const {
  return guard_host_memory("out of host memory reading the GPU's timestamps",
                           [&] { return impl_->timer.read(); });
}

}  // namespace tprop
