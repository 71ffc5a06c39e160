#include "bench_frames.h"

#include <cassert>
#include <chrono>
#include <iterator>
#include <sstream>

#include <sys/resource.h>

#include "bench_baseline.h"
#include "compare.h"
#include "depth_order.h"
#include "reference.h"
#include "vk_buffer.h"

namespace tprop::bench {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Minor and major page faults of the calling thread so far.
uint64_t thread_page_faults() {
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) != 0) return 0;
  return uint64_t(u.ru_minflt) + uint64_t(u.ru_majflt);
}

Error vulkan_error(const char* what, VkResult r) {
  return Error{std::string(what) + ": " + describe(r)};
}

// The one place that reads FrameStats and StageTimes.
void read_frame_figures(const Propagator& gpu, FrameRecord& r) {
  const FrameStats& fs = gpu.last_frame();
  r.entities = fs.entities;
  r.levels = fs.levels;
  r.hierarchy_changed = fs.hierarchy_changed;
  r.evaluated_entities = fs.evaluated_entities;
  r.work_list_walked = fs.work_list_walked;
  r.staged_entities = fs.staged_entities;
  r.values_only_entities = fs.values_only_entities;
  r.values_in_place = fs.values_in_place;
  r.moved_entities = fs.moved_entities;
  r.compacted_entities = fs.compacted_entities;
  r.slot_ordered_entities = fs.slot_ordered_entities;
  r.upload_bytes = fs.upload_bytes;
  r.in_place_bytes = fs.in_place_bytes;
  r.dispatches = fs.dispatches;
  r.jump_runs = fs.jump_runs;
  r.scan_runs = fs.scan_runs;
  r.climbed_levels = fs.climbed_levels;
  r.shared_wide_stores = fs.shared_wide_stores;
  r.word_stores = fs.word_stores;
  r.slot_order = fs.slot_order;
  r.zeroed_ahead_bytes = fs.zeroed_ahead_bytes;
  r.addressing = fs.descriptors ? (fs.texel_reads ? "texels" : "descriptors")
                                : (fs.texel_reads ? "address-texels" : "addresses");
  r.pipelines_created = fs.pipelines_created;
  r.update_stages = fs.host;
  const Result<StageTimes> times = gpu.stage_times();
  if (!times) {
    r.gpu_times_error = times.error().message;
    return;
  }
  const double ms[] = {times->upload_ms, times->evaluate_ms};
  assert(std::size(ms) == gpu_stage_names().size() && "one figure per stage name");
  for (size_t i = 0; i < gpu_stage_names().size(); ++i)
    r.gpu_stages.push_back({gpu_stage_names()[i], ms[i]});
  r.gpu_total_ms = times->total_ms();
}

// The GPU's LocalToWorld by position in `order` (sort_by_depth of the same store). The one
// place that knows how read_back() indexes its result: by store slot.
Result<std::vector<float4x4>> gpu_world_by_position(Propagator& gpu, const DepthOrder& order) {
  Result<std::vector<float4x4>> back = gpu.read_back();
  if (!back) return back.error();
  if (back->size() != order.position.size())
    return Error{"the GPU returned " + std::to_string(back->size()) +
                 " matrices for a scene of " + std::to_string(order.position.size()) + " slots"};
  std::vector<float4x4> out(order.size());
  for (uint32_t pos = 0; pos < order.size(); ++pos) out[pos] = (*back)[order.slot[pos]];
  return out;
}

// The result against the reference, or an error that names the worst element.
Result<Comparison> check_against(const char* who, const DepthOrder& order,
                                 const std::vector<float4x4>& reference,
                                 const std::vector<float4x4>& got, const EntityStore& store) {
  Result<Comparison> c = compare_local_to_world(order, reference, got);
  if (!c) return c.error();
  if (c->within_tolerance()) return c;
  std::ostringstream msg;
  msg << who << " differs from the CPU reference: " << c->mismatches
      << " elements outside the tolerance, worst " << c->worst_ratio << " tolerances";
  for (const Mismatch& m : c->first) {
    msg << "\n  entity " << store.id_at(order.slot[m.position]) << " (level " << m.level
        << ") [" << m.column << "][" << m.row << "]: expected " << m.expected << ", got "
        << m.got << " (tolerance " << m.tolerance << ")";
  }
  return Error{msg.str()};
}

}  // namespace

const std::vector<std::string>& gpu_stage_names() {
  static const std::vector<std::string> names = {"upload", "evaluate"};
  return names;
}

std::optional<double> FrameRecord::gb_per_s() const {
  if (!gpu_total_ms || *gpu_total_ms <= 0) return std::nullopt;
  return double(model_bytes) / (*gpu_total_ms * 1e-3) / 1e9;
}

std::optional<double> FrameRecord::gpu_over_loop() const {
  if (!gpu_total_ms || loop_ms <= 0) return std::nullopt;
  return *gpu_total_ms / loop_ms;
}

struct SceneRunner::Impl {
  const VulkanContext* context = nullptr;
  std::optional<Propagator> gpu;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  std::vector<float4x4> loop_world;
  // The warm-up (BenchOptions::warm_gpu_ms): two command buffers of fills, submitted in turn.
  Buffer warm;  // what the fills write
  uint32_t warm_ms = 0;
  VkCommandBuffer heat[2] = {};
  VkFence heat_fence[2] = {};
  bool heat_pending[2] = {};

  ~Impl() {
    for (int i = 0; i < 2; ++i)
      if (heat_fence[i]) {
        if (heat_pending[i])
          vkWaitForFences(context->device(), 1, &heat_fence[i], VK_TRUE, UINT64_MAX);
        vkDestroyFence(context->device(), heat_fence[i], nullptr);
      }
    if (fence) vkDestroyFence(context->device(), fence, nullptr);
    if (pool) vkDestroyCommandPool(context->device(), pool, nullptr);
  }

  // Keeps the GPU busy with fills for warm_ms of host time, two batches in flight, and returns
  // once the last has completed, so that the frame submitted next starts on a busy GPU's clocks
  // (an idle GPU lowers them and raises them only after milliseconds of load: on an H200 a 1M
  // chain evaluated in 3.05 ms after the bench's CPU work, 0.78 ms after seconds of GPU work).
  // The GPU then idles only while the frame is recorded and submitted, and neither the frame's
  // GPU times nor its host times include the fills.
  Status heat_up() {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0;; k ^= 1) {
      if (heat_pending[k]) {  // the batch before the other one: done or nearly
        if (VkResult r = vkWaitForFences(context->device(), 1, &heat_fence[k], VK_TRUE,
                                         UINT64_MAX);
            r != VK_SUCCESS)
          return vulkan_error("vkWaitForFences", r);
        if (VkResult r = vkResetFences(context->device(), 1, &heat_fence[k]); r != VK_SUCCESS)
          return vulkan_error("vkResetFences", r);
        heat_pending[k] = false;
      }
      if (ms_since(t0) >= warm_ms) {
        if (heat_pending[k ^ 1]) continue;  // the other one's wait, then return
        return ok_status();
      }
      VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      submit.commandBufferCount = 1;
      submit.pCommandBuffers = &heat[k];
      if (VkResult r = vkQueueSubmit(context->queue(), 1, &submit, heat_fence[k]); r != VK_SUCCESS)
        return vulkan_error("vkQueueSubmit", r);
      heat_pending[k] = true;
    }
  }

  // Record the staged frame into our own command buffer, submit it and wait.
  Status submit_and_wait() {
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (VkResult r = vkBeginCommandBuffer(cmd, &begin); r != VK_SUCCESS)
      return vulkan_error("vkBeginCommandBuffer", r);
    gpu->record(cmd);
    if (VkResult r = vkEndCommandBuffer(cmd); r != VK_SUCCESS)
      return vulkan_error("vkEndCommandBuffer", r);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    if (VkResult r = vkQueueSubmit(context->queue(), 1, &submit, fence); r != VK_SUCCESS)
      return vulkan_error("vkQueueSubmit", r);
    if (VkResult r = vkWaitForFences(context->device(), 1, &fence, VK_TRUE, UINT64_MAX);
        r != VK_SUCCESS)
      return vulkan_error("vkWaitForFences", r);
    if (VkResult r = vkResetFences(context->device(), 1, &fence); r != VK_SUCCESS)
      return vulkan_error("vkResetFences", r);
    return ok_status();
  }
};

SceneRunner::SceneRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SceneRunner::SceneRunner(SceneRunner&&) noexcept = default;
SceneRunner& SceneRunner::operator=(SceneRunner&&) noexcept = default;
SceneRunner::~SceneRunner() = default;

Result<SceneRunner> SceneRunner::create(const VulkanContext& context,
                                       const PropagatorOptions& options, uint32_t warm_ms) {
  auto impl = std::make_unique<Impl>();
  impl->context = &context;
  impl->warm_ms = warm_ms;
  Result<Propagator> gpu = Propagator::create(context, options);
  if (!gpu) return gpu.error();
  impl->gpu.emplace(std::move(*gpu));
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = context.queue_family();
  if (VkResult r = vkCreateCommandPool(context.device(), &pool_info, nullptr, &impl->pool);
      r != VK_SUCCESS)
    return vulkan_error("vkCreateCommandPool", r);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = impl->pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  if (VkResult r = vkAllocateCommandBuffers(context.device(), &alloc, &impl->cmd); r != VK_SUCCESS)
    return vulkan_error("vkAllocateCommandBuffers", r);
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if (VkResult r = vkCreateFence(context.device(), &fence_info, nullptr, &impl->fence);
      r != VK_SUCCESS)
    return vulkan_error("vkCreateFence", r);
  if (warm_ms) {
    // Batches of four fills of 64 MiB: about 0.1 ms each on an H200, short enough to stop
    // near warm_ms, long enough that submitting them costs little beside.
    Result<Buffer> warm =
        Buffer::create(context, VkDeviceSize(64) << 20, BufferKind::DeviceStorage, "tprop_bench.warm");
    if (!warm) return warm.error();
    impl->warm = std::move(*warm);
    alloc.commandBufferCount = 2;
    if (VkResult r = vkAllocateCommandBuffers(context.device(), &alloc, impl->heat); r != VK_SUCCESS)
      return vulkan_error("vkAllocateCommandBuffers", r);
    for (int k = 0; k < 2; ++k) {
      if (VkResult r = vkCreateFence(context.device(), &fence_info, nullptr, &impl->heat_fence[k]);
          r != VK_SUCCESS)
        return vulkan_error("vkCreateFence", r);
      VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      if (VkResult r = vkBeginCommandBuffer(impl->heat[k], &begin); r != VK_SUCCESS)
        return vulkan_error("vkBeginCommandBuffer", r);
      for (uint32_t i = 0; i < 4; ++i)
        vkCmdFillBuffer(impl->heat[k], impl->warm.handle(), 0, VK_WHOLE_SIZE, i);
      if (VkResult r = vkEndCommandBuffer(impl->heat[k]); r != VK_SUCCESS)
        return vulkan_error("vkEndCommandBuffer", r);
    }
  }
  return SceneRunner(std::move(impl));
}

Result<FrameRecord> SceneRunner::run_frame(FrameKind kind, EntityStore& store, uint64_t seed,
                                           EntityId& next_id, bool validate) {
  Impl& m = *impl_;
  FrameRecord r;
  r.kind = kind;
  const auto edit_start = std::chrono::steady_clock::now();
  r.edit = apply_edit(kind, store, seed, next_id);
  r.edit_ms = ms_since(edit_start);

  const uint64_t faults_before = thread_page_faults();
  const auto frame_start = std::chrono::steady_clock::now();
  if (Status st = m.gpu->update(store); !st) return st.error();
  r.host_update_ms = ms_since(frame_start);
  r.update_page_faults = thread_page_faults() - faults_before;
  if (m.warm_ms)
    if (Status st = m.heat_up(); !st) return st.error();
  const auto submit_start = std::chrono::steady_clock::now();
  if (Status st = m.submit_and_wait(); !st) return st.error();
  r.frame_wall_ms = r.host_update_ms + ms_since(submit_start);
  store.mark_statics_baked();
  read_frame_figures(*m.gpu, r);

  // The loop works from its own depth order, sorted outside its timing as the GPU's is outside
  // the GPU time.
  const DepthOrder order = sort_by_depth(store);
  // The share of the scene this frame evaluated: nothing when nothing changed, the work list,
  // or the whole order.
  r.model_bytes = r.entities ? frame_bytes(store, m.gpu->output().stride) *
                                   r.evaluated_entities / r.entities
                             : 0;
  // Sized (and its pages touched) before the clock starts: the loop is timed, not the kernel's
  // first-touch page faults.
  m.loop_world.resize(order.size());
  const auto loop_start = std::chrono::steady_clock::now();
  baseline_loop(store, order, m.loop_world);
  r.loop_ms = ms_since(loop_start);

  if (validate) {
    // A fresh reference per frame is exact here: generated scenes have no Static entities.
    std::vector<float4x4> reference;
    CpuReference().evaluate(store, order, reference);
    Result<std::vector<float4x4>> gpu_world = gpu_world_by_position(*m.gpu, order);
    if (!gpu_world) return gpu_world.error();
    Result<Comparison> gpu_check = check_against("the GPU", order, reference, *gpu_world, store);
    if (!gpu_check) return gpu_check.error();
    Result<Comparison> loop_check =
        check_against("the single-thread loop", order, reference, m.loop_world, store);
    if (!loop_check) return loop_check.error();
    r.check = FrameCheck{gpu_check->worst_ratio, gpu_check->max_abs_error, loop_check->worst_ratio};
  }
  return r;
}

}  // namespace tprop::bench
