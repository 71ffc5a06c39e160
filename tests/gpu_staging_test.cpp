// The per-slot staging mirrors (issue 11): a full upload packs every slot into them, 64 bytes a
// slot (16 where translation, rotation and scale are written in place: packed straight into
// device memory; none where device memory is host memory, which takes every input in place:
// ValueWrites::Staged keeps the mirrors there, for these tests), and nothing reads them once its
// copies have completed, so they are freed then (by run() after its wait, else by the next
// update()) and made again by the next frame that uploads everything. Each frame after is
// checked against the CPU reference: values, spawns, despawns, re-parents, Statics and growth
// past the buffers' room must come through the deltas alone.
#include "gpu_test_support.h"

namespace tprop::test {
namespace {

// flags 4, translation 16, rotation 16, scale 16, parent 4, rare index 4, static index 4
// (shaders/scene_layout.h), and the mirrors hold the packed slots only, without growth room;
// without the three vec4 arrays where those are written in place (FrameStats::in_place_arrays),
// without any where every input is (in_place_inputs).
constexpr uint64_t kMirrorBytesPerSlot = 4 + 16 + 16 + 16 + 4 + 4 + 4;
constexpr uint64_t kInPlaceBytesPerSlot = 16 + 16 + 16;
uint64_t mirror_bytes_per_slot(const FrameStats& fs) {
  if (fs.in_place_inputs) return 0;
  return kMirrorBytesPerSlot - (fs.in_place_arrays ? kInPlaceBytesPerSlot : 0);
}

constexpr ValueWrites kBothWays[] = {ValueWrites::Auto, ValueWrites::Staged};
const char* way_name(ValueWrites w) { return w == ValueWrites::Auto ? "auto" : "staged"; }

class GpuStaging : public GpuTest {
 protected:
  // The application's way: record() into its own command buffer, submit, wait, bake.
  Status record_submit_wait(Propagator& gpu, EntityStore& store) {
    const VkDevice device = ctx().device();
    if (!pool_) {
      VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
      cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
      cpci.queueFamilyIndex = ctx().queue_family();
      if (vkCreateCommandPool(device, &cpci, nullptr, &pool_) != VK_SUCCESS)
        return Error{"no command pool"};
      VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      cbai.commandPool = pool_;
      cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      cbai.commandBufferCount = 1;
      if (vkAllocateCommandBuffers(device, &cbai, &cmd_) != VK_SUCCESS)
        return Error{"no command buffer"};
    }
    vkResetCommandBuffer(cmd_, 0);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (vkBeginCommandBuffer(cmd_, &begin) != VK_SUCCESS) return Error{"begin failed"};
    gpu.record(cmd_);
    if (vkEndCommandBuffer(cmd_) != VK_SUCCESS) return Error{"end failed"};
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd_;
    if (vkQueueSubmit(ctx().queue(), 1, &si, VK_NULL_HANDLE) != VK_SUCCESS)
      return Error{"submit failed"};
    if (vkQueueWaitIdle(ctx().queue()) != VK_SUCCESS) return Error{"wait failed"};
    store.mark_statics_baked();
    return ok_status();
  }
  void TearDown() override {
    if (pool_) vkDestroyCommandPool(ctx().device(), pool_, nullptr);
    GpuTest::TearDown();
  }

  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
};

// Frames of every kind of edit, the arrays in pieces of 256 slots, and a spawn burst that grows
// them past their room: the mirrors stay gone, and every frame matches the reference.
TEST_F(GpuStaging, TheMirrorsGoOnceTheFirstFrameHasCompletedAndTheFramesAfterStillMatch) {
  EntityStore store;
  ValueSource v(11);
  EntityId next = 1500;
  build_random_scene(store, next, 12, v);
  Propagator gpu =
      make_propagator(ctx(), {.value_writes = ValueWrites::Staged, .max_buffer_bytes = 16384});
  CpuReference cpu;

  ASSERT_TRUE(gpu.update(store).ok());
  const FrameStats first = gpu.last_frame();
  ASSERT_TRUE(first.full_upload);
  EXPECT_EQ(first.mirror_bytes, mirror_bytes_per_slot(first) * store.slot_capacity());
  EXPECT_GE(first.staging_bytes, first.mirror_bytes);
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame",
                              [&] { return gpu.run_staged(store); }),
            1.0);
  // run() waited for the frame, so its copies are done: exactly the mirrors went.
  EXPECT_EQ(gpu.last_frame().mirror_bytes, 0u);
  EXPECT_EQ(gpu.last_frame().staging_bytes, first.staging_bytes - first.mirror_bytes);

  uint32_t structural = 0;
  for (int frame = 1; frame <= 60; ++frame) {
    const std::string what = "frame " + std::to_string(frame);
    if (frame % 6 == 0) {
      // Values alone, of a tenth of the scene.
      for (uint32_t k = 0; k < next / 10; ++k) store.set_translation(v.below(next), v.vec(5));
    } else {
      next = mixed_edit_frame(store, next, v);
    }
    if (frame == 20) {
      // More than the eighth of room the arrays were made with: new pieces, the last one
      // replaced and copied over on the GPU.
      for (EntityId k = 0; k < 600; ++k, ++next) {
        store.create(next);
        add_features(store, next, random_features(v) & ~kOverride, v);
        store.set_parent(next, v.below(next));
      }
    }
    const uint32_t pieces_before = gpu.last_frame().slot_pieces;
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    const FrameStats& fs = gpu.last_frame();
    EXPECT_FALSE(fs.full_upload) << what;
    EXPECT_EQ(fs.mirror_bytes, 0u) << what;
    if (frame == 20) {
      EXPECT_GT(fs.slot_pieces, pieces_before) << "the burst grew the arrays";
    }
    structural += fs.hierarchy_changed;
  }
  EXPECT_GE(structural, 40u);
  uint32_t statics = 0;
  for (EntityId e = 0; e < next; ++e) statics += store.has(e, Component::Static);
  EXPECT_GT(statics, 0u) << "Statics frozen and toggled through the frames of deltas";
}

// record() into the application's command buffer: the Propagator cannot know when that frame
// completes, so the mirrors stay until the next update(), which the frame protocol calls only
// then; that update() hands them all to a worker thread that frees them (buffer_reclaimer.h), so
// that no frame pays for freeing them.
TEST_F(GpuStaging, AFrameTheApplicationRecordedFreesTheMirrorsAtTheNextUpdate) {
  EntityStore store;
  ValueSource v(12);
  EntityId next = 800;
  build_random_scene(store, next, 10, v);
  Propagator gpu = make_propagator(ctx(), {.value_writes = ValueWrites::Staged});
  CpuReference cpu;
  auto own_frame = [&] {
    if (Status st = gpu.update(store); !st) return st;
    return record_submit_wait(gpu, store);
  };
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame", own_frame), 1.0);
  const FrameStats first = gpu.last_frame();
  EXPECT_TRUE(first.full_upload);
  EXPECT_EQ(first.mirror_bytes, kMirrorBytesPerSlot * store.slot_capacity());
  EXPECT_GT(first.staging_bytes, first.mirror_bytes);
  for (int frame = 1; frame <= 4; ++frame) {
    const std::string what = "frame " + std::to_string(frame);
    next = mixed_edit_frame(store, next, v);
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str(), own_frame), 1.0);
    const FrameStats& fs = gpu.last_frame();
    EXPECT_FALSE(fs.full_upload) << what;
    EXPECT_EQ(fs.mirror_bytes, 0u) << what;
    EXPECT_LT(fs.staging_bytes, first.staging_bytes) << what << ": the mirrors went";
  }
}

// Each way back to a full upload makes the mirrors again, for the slots it packs, and frees them
// once that frame has completed: another store, an update() never recorded, and an update() that
// failed (a matrix the Affine3x4 output cannot hold). Where every input is written in place,
// each such full upload writes them all again.
TEST_F(GpuStaging, AFullUploadAgainMakesTheMirrorsAgain) {
  for (ValueWrites writes : kBothWays) {
    SCOPED_TRACE(way_name(writes));
    EntityStore a, b;
    ValueSource v(13);
    EntityId next_a = 700, next_b = 1200;
    build_random_scene(a, next_a, 8, v);
    build_random_scene(b, next_b, 8, v);
    // No user matrix, so that the refusal below is the one this test makes.
    auto affine_only = [](EntityStore& s, EntityId n) {
      for (EntityId e = 0; e < n; ++e) {
        s.remove(e, Component::CompositeRotation);
        s.remove(e, Component::CompositeScale);
        s.remove(e, Component::ParentScaleInverse);
        s.remove(e, Component::LocalToParent);
        s.remove(e, Component::LocalToWorld);
      }
    };
    affine_only(a, next_a);
    affine_only(b, next_b);
    // In pieces of 256 slots, so that mirrors made again span several, a last one shorter.
    Propagator gpu = make_propagator(ctx(), {.value_writes = writes,
                                             .max_buffer_bytes = 16384,
                                             .output_layout = OutputLayout::Affine3x4});
    CpuReference cpu_a, cpu_b;
    // A frame that must upload everything: the mirrors are there at update() and gone after run().
    auto full_frame = [&](EntityStore& s, CpuReference& cpu, const char* what) {
      SCOPED_TRACE(what);
      double worst = 1e30;
      auto staged = [&] {
        if (Status st = gpu.update(s); !st) return st;
        const FrameStats& fs = gpu.last_frame();
        EXPECT_TRUE(fs.full_upload);
        EXPECT_EQ(fs.mirror_bytes, mirror_bytes_per_slot(fs) * s.slot_capacity());
        return gpu.run_staged(s);
      };
      worst = frame_and_compare(gpu, cpu, s, what, staged);
      EXPECT_EQ(gpu.last_frame().mirror_bytes, 0u);
      return worst;
    };
    auto delta_frame = [&](EntityStore& s, CpuReference& cpu, EntityId& next, const char* what) {
      next = mixed_edit_frame(s, next, v);
      affine_only(s, next);
      const double worst = frame_and_compare(gpu, cpu, s, what);
      EXPECT_FALSE(gpu.last_frame().full_upload) << what;
      EXPECT_EQ(gpu.last_frame().mirror_bytes, 0u) << what;
      return worst;
    };

    ASSERT_LE(full_frame(a, cpu_a, "store a"), 1.0);
    ASSERT_LE(delta_frame(a, cpu_a, next_a, "a, deltas"), 1.0);
    ASSERT_LE(full_frame(b, cpu_b, "store b, larger"), 1.0);
    ASSERT_LE(delta_frame(b, cpu_b, next_b, "b, deltas"), 1.0);
    // The frozen table now holds b's Statics: a's baked ones are computed again from the store,
    // as by a backend that never computed them (CpuReference's rule), so a fresh reference.
    cpu_a = CpuReference();
    ASSERT_LE(full_frame(a, cpu_a, "store a again, smaller"), 1.0);
    ASSERT_LE(delta_frame(a, cpu_a, next_a, "a, deltas again"), 1.0);

    // An update() never recorded: its deltas never reached the GPU.
    next_a = mixed_edit_frame(a, next_a, v);
    affine_only(a, next_a);
    ASSERT_TRUE(gpu.update(a).ok());
    EXPECT_EQ(gpu.last_frame().mirror_bytes, 0u) << "a frame of deltas";
    next_a = mixed_edit_frame(a, next_a, v);
    affine_only(a, next_a);
    ASSERT_LE(full_frame(a, cpu_a, "after an update() never recorded"), 1.0);
    ASSERT_LE(delta_frame(a, cpu_a, next_a, "a, deltas after it"), 1.0);

    // Full uploads never recorded, one after the other: the second finds the first's mirrors,
    // keeps the pieces that are large enough and replaces the rest (the store grew by 300 slots).
    cpu_b = CpuReference();  // b's Statics are computed again, as a's were above
    ASSERT_TRUE(gpu.update(b).ok());
    EXPECT_TRUE(gpu.last_frame().full_upload);
    EXPECT_EQ(gpu.last_frame().mirror_bytes,
              mirror_bytes_per_slot(gpu.last_frame()) * b.slot_capacity());
    for (EntityId k = 0; k < 300; ++k, ++next_b) {
      b.create(next_b);
      b.set_translation(next_b, v.vec(5));
      b.set_parent(next_b, v.below(next_b));
    }
    ASSERT_TRUE(gpu.update(b).ok());
    EXPECT_EQ(gpu.last_frame().mirror_bytes,
              mirror_bytes_per_slot(gpu.last_frame()) * b.slot_capacity());
    ASSERT_LE(full_frame(b, cpu_b, "b after two full uploads never recorded"), 1.0);
    ASSERT_LE(delta_frame(b, cpu_b, next_b, "b, deltas after them"), 1.0);
    cpu_a = CpuReference();
    ASSERT_LE(full_frame(a, cpu_a, "a once more"), 1.0);

    // An update() refused: nothing of it was recorded.
    float4x4 projective(1.0f);
    projective[0][3] = 0.25f;
    EntityId victim = 0;
    while (!a.contains(victim)) ++victim;
    a.set_matrix(victim, MatrixComponent::LocalToParent, projective);
    ASSERT_FALSE(gpu.update(a).ok());
    a.remove(victim, Component::LocalToParent);
    ASSERT_LE(full_frame(a, cpu_a, "after a refused update()"), 1.0);
    ASSERT_LE(delta_frame(a, cpu_a, next_a, "a, deltas after that"), 1.0);
  }
}

// Plain value changes are staged from the store's log of them (StoreChanges::value_records)
// where it kept one, and from the records where a frame changed more than the log holds (an
// eighth of the slots, at least 4,096): both, staged and written in place, with Static and
// rare entities among the changed (sent whole either way), match the reference.
TEST_F(GpuStaging, ValueFramesStageFromTheStoresLogOrItsRecordsAlike) {
  for (ValueWrites writes : {ValueWrites::Staged, ValueWrites::InPlace}) {
    SCOPED_TRACE(writes == ValueWrites::InPlace ? "in place" : "staged");
    EntityStore store;
    store.set_value_log_threshold(0);  // logged at this size too (by default from 4M slots)
    ValueSource v(31);
    build_random_scene(store, 20000, 12, v);
    Propagator gpu = make_propagator(ctx(), {.value_writes = writes});
    CpuReference cpu;
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
    for (const uint32_t changed : {3000u, 6000u, 40u, 20000u, 4096u}) {
      const std::string what = std::to_string(changed) + " values";
      for (uint32_t k = 0; k < changed; ++k) {
        const EntityId e = v.below(20000);
        store.set_translation(e, v.vec(5));
        if (k % 3 == 0) store.set_rotation(e, quat(v.vec(1).x, 0.6f, 0.0f, 0.8f));
      }
      ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      EXPECT_GT(gpu.last_frame().values_only_entities, 0u) << what;
    }
  }
}

// Where translation, rotation and scale are written in place, a full upload packs them straight
// into device memory: a full upload that also grows the arrays (after a refused update(), the
// store grew past their room) must not copy the replaced last piece's old contents over what it
// packed, in either way of writing values.
TEST_F(GpuStaging, AFullUploadThatGrowsTheArraysKeepsWhatItPacked) {
  for (ValueWrites writes : {ValueWrites::InPlace, ValueWrites::Staged}) {
    SCOPED_TRACE(writes == ValueWrites::InPlace ? "in place" : "staged");
    EntityStore store;
    ValueSource v(14);
    // 300 slots: in pieces of 256 (48-byte LocalToWorlds in 16 KiB), the last one short.
    for (EntityId e = 0; e < 300; ++e) {
      store.create(e);
      store.set_translation(e, v.vec(5));
      if (e > 0) store.set_parent(e, v.below(e));
    }
    Propagator gpu = make_propagator(ctx(), {.value_writes = writes,
                                             .max_buffer_bytes = 16384,
                                             .output_layout = OutputLayout::Affine3x4});
    CpuReference cpu;
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
    EXPECT_EQ(gpu.last_frame().slot_pieces, 2u);
    if (writes == ValueWrites::Staged) {
      EXPECT_FALSE(gpu.last_frame().in_place_arrays);
    }
    float4x4 projective(1.0f);
    projective[0][3] = 0.25f;
    store.set_matrix(7, MatrixComponent::LocalToParent, projective);
    // Refused (the Affine3x4 output cannot hold it): the next update() packs everything again.
    ASSERT_FALSE(gpu.update(store).ok());
    store.remove(7, Component::LocalToParent);
    // New values for every old entity, and the store past the arrays' room.
    for (EntityId e = 0; e < 300; ++e) store.set_translation(e, v.vec(5));
    for (EntityId e = 300; e < 700; ++e) {
      store.create(e);
      store.set_translation(e, v.vec(5));
      store.set_parent(e, v.below(e));
    }
    ASSERT_LE(frame_and_compare(gpu, cpu, store, "full upload that grows"), 1.0);
    EXPECT_TRUE(gpu.last_frame().full_upload);
    EXPECT_GT(gpu.last_frame().slot_pieces, 2u);
  }
}

// Where device memory is host memory (a CPU device, an integrated GPU) and values are written in
// place, a full upload packs flags, parents, rare and static indices into device memory as it
// does translation, rotation and scale: no mirror at all, and its upload copies nothing of the
// per-slot inputs, exactly 64 bytes a packed slot fewer than the same frame staged. Elsewhere
// (a discrete GPU, whose host-visible device memory may be a small window) they stay mirrored.
TEST_F(GpuStaging, EveryInputIsPackedInPlaceWhereDeviceMemoryIsHostMemory) {
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(ctx().physical_device(), &props);
  const bool uma = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                   props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  EntityStore store;
  ValueSource v(15);
  EntityId next = 2000;
  build_random_scene(store, next, 9, v);
  Propagator in_place = make_propagator(ctx(), {.value_writes = ValueWrites::InPlace,
                                                .max_buffer_bytes = 16384});
  Propagator staged = make_propagator(ctx(), {.value_writes = ValueWrites::Staged,
                                              .max_buffer_bytes = 16384});
  CpuReference cpu_in_place, cpu_staged;
  ASSERT_LE(frame_and_compare(in_place, cpu_in_place, store, "in place, first frame"), 1.0);
  ASSERT_LE(frame_and_compare(staged, cpu_staged, store, "staged, first frame"), 1.0);
  const FrameStats& a = in_place.last_frame();
  const FrameStats& b = staged.last_frame();
  ASSERT_TRUE(a.full_upload && b.full_upload);
  EXPECT_FALSE(b.in_place_inputs);
  EXPECT_EQ(a.in_place_inputs, a.in_place_arrays && uma);
  // What the staged frame copies, the other writes in place (FrameStats::in_place_bytes).
  EXPECT_EQ(b.in_place_bytes, 0u);
  if (a.in_place_inputs) {
    EXPECT_EQ(a.upload_bytes + kMirrorBytesPerSlot * store.slot_capacity(), b.upload_bytes);
    EXPECT_EQ(a.in_place_bytes, kMirrorBytesPerSlot * store.slot_capacity());
  } else if (a.in_place_arrays) {
    EXPECT_EQ(a.upload_bytes + kInPlaceBytesPerSlot * store.slot_capacity(), b.upload_bytes);
    EXPECT_EQ(a.in_place_bytes, kInPlaceBytesPerSlot * store.slot_capacity());
  } else {
    EXPECT_EQ(a.in_place_bytes, 0u);
  }
  // Frames of deltas after it, a spawn burst past the arrays' room among them, then a full
  // upload into the grown arrays (the store given a new scene): each matches the reference.
  for (int frame = 1; frame <= 12; ++frame) {
    const std::string what = "frame " + std::to_string(frame);
    next = mixed_edit_frame(store, next, v);
    if (frame == 6)
      for (EntityId k = 0; k < 900; ++k, ++next) {
        store.create(next);
        store.set_translation(next, v.vec(5));
        store.set_parent(next, v.below(next));
      }
    ASSERT_LE(frame_and_compare(in_place, cpu_in_place, store, what.c_str()), 1.0);
    EXPECT_FALSE(in_place.last_frame().full_upload) << what;
  }
  EntityStore reloaded;
  next = 3500;
  build_random_scene(reloaded, next, 11, v);
  CpuReference cpu_reloaded;
  ASSERT_LE(frame_and_compare(in_place, cpu_reloaded, reloaded, "a new scene"), 1.0);
  EXPECT_TRUE(in_place.last_frame().full_upload);
}

}  // namespace
}  // namespace tprop::test
