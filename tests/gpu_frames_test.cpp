// Hundreds of frames of every kind of edit at once (values, spawns, despawns, re-parents, cycles
// made and broken, unknown parents, Static and override toggles), the GPU against the CPU
// reference after every frame, under each way the Propagator can evaluate a frame: a work list
// of the changed subtrees, the whole order skipping the unchanged on the GPU, and the default
// choice between them, by descriptors and by device addresses, each narrow walk, the general
// shader beside the specialized ones, and with every array in pieces of a few hundred entities
// (the scene grows across piece boundaries, parents and children in different pieces).
#include "gpu_test_support.h"

#include "../shaders/scene_layout.h"

namespace tprop::test {
namespace {

struct Strategy {
  const char* name;
  PropagatorOptions options;
};

class GpuFrames : public GpuTest, public ::testing::WithParamInterface<Strategy> {};

TEST_P(GpuFrames, EveryFrameOfMixedEditsMatchesTheReference) {
  EntityStore store;
  ValueSource v(31);
  EntityId next = 1500;
  build_random_scene(store, next, 12, v);
  Propagator gpu = make_propagator(ctx(), GetParam().options);
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  const uint32_t first_pieces = gpu.last_frame().slot_pieces;
  uint32_t structural = 0, quiet = 0, cycles = 0, resolved = 0, work_lists = 0, whole = 0;
  uint32_t deep_roots = 0, compacted = 0;
  for (int frame = 1; frame <= 300; ++frame) {
    // Two frames in ten without edits: the first still bakes the Statics new in the frame
    // before it, the second has nothing at all to do.
    if (frame % 10 >= 2) next = mixed_edit_frame(store, next, v);
    // Besides what random re-parents make: a 3-cycle of new entities every 25 frames, with a
    // child below it, resolved 9 frames later.
    if (frame % 25 == 3) {
      for (EntityId k = 0; k < 4; ++k) {
        store.create(next + k);
        store.set_translation(next + k, v.vec(2));
      }
      store.set_parent(next, next + 1);
      store.set_parent(next + 1, next + 2);
      store.set_parent(next + 2, next);
      store.set_parent(next + 3, next + 2);
      next += 4;
    }
    if (frame % 25 == 12) store.remove(next - 4, Component::Parent);
    // Every live entity moved: value deltas across many staging pieces where they are small.
    if (frame % 50 == 7)
      for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot)
        if (store.alive_at(slot)) store.set_translation(store.id_at(slot), v.vec(2));
    const std::string what = "frame " + std::to_string(frame);
    const uint32_t cycles_before = gpu.order().cycles_broken();
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    const FrameStats& fs = gpu.last_frame();
    // Nothing uploads everything again, growth beyond the buffers' room included: the GPU keeps
    // what it holds (a replaced piece is copied over on the GPU).
    EXPECT_FALSE(fs.full_upload) << what;
    structural += fs.hierarchy_changed;
    cycles = std::max(cycles, gpu.order().cycles_broken());
    resolved += gpu.order().cycles_broken() < cycles_before;
    if (frame % 10 == 1 && frame > 1) {
      ++quiet;
      EXPECT_EQ(fs.dirty_entities, 0u) << what;
      EXPECT_EQ(fs.evaluated_entities, 0u) << what;
      EXPECT_EQ(fs.upload_bytes, 0u) << what;
      EXPECT_EQ(fs.compacted_entities, 0u) << what << ": compaction rides on structural frames";
    }
    work_lists += fs.dirty_entities && !fs.full_pass;
    deep_roots = std::max(deep_roots, gpu.order().deep_roots());
    compacted += fs.compacted_entities;
    // (A frame that moves everything computes everything, as a first frame does.)
    whole += fs.full_pass && !fs.full_upload && frame % 50 != 7;
  }
  // The sequence reached what it is meant to exercise.
  EXPECT_GE(structural, 200u);
  EXPECT_EQ(quiet, 29u);
  EXPECT_GE(cycles, 1u);
  EXPECT_GE(resolved, 1u) << "a cycle made by one frame and broken by a later one";
  if (const uint64_t cap = GetParam().options.max_buffer_bytes) {
    const FrameStats& fs = gpu.last_frame();
    EXPECT_GE(first_pieces, 5u) << "1,500 slots in pieces of " << cap / 64 << " slots";
    EXPECT_GT(fs.slot_pieces, first_pieces) << "the scene grew by pieces";
    EXPECT_LE(fs.largest_buffer_bytes, cap);
  }
  // Compaction a few entities a frame or none leaves roots below level 0 for the passes.
  if (GetParam().options.compact_per_frame < 16) {
    EXPECT_GE(deep_roots, 1u);
  }
  if (GetParam().options.compact_per_frame == UINT32_MAX) {
    EXPECT_EQ(deep_roots, 0u);
  }
  if (GetParam().options.compact_per_frame == 0) {
    EXPECT_EQ(compacted, 0u);
  } else {
    EXPECT_GE(compacted, 10u);
  }
  const uint32_t max = GetParam().options.work_list_max;
  if (max == 0) {
    EXPECT_EQ(work_lists, 0u);
  }
  if (max == UINT32_MAX) {
    EXPECT_EQ(whole, 0u);
  }
}

// A frame's plain value changes upload the values alone (StoreChanges::values), except where
// more of the entity derives from them; the same slot may get both kinds of delta in a frame.
TEST_P(GpuFrames, ValuesAloneAndWholeEntitiesInOneFrameMatchTheReference) {
  EntityStore store;
  store.create(1);  // a root
  store.set_translation(1, float3(1, 2, 3));
  store.create(2);  // a CompositeRotation from Rotation and its pivot
  store.set_parent(2, 1);
  store.set_rotation(2, quat(0.8f, 0.6f, 0.0f, 0.0f));
  store.set_pivot(2, PivotComponent::RotationPivot, float3(0, 1, 0));
  store.add(2, Component::CompositeRotation);
  store.create(3);  // its child
  store.set_parent(3, 2);
  store.set_translation(3, float3(0, 0, 1));
  store.create(4);  // Static
  store.set_parent(4, 1);
  store.set_translation(4, float3(2, 0, 0));
  store.add(4, Component::Static);
  store.create(5);  // a child of an entity that does not exist yet
  store.set_parent(5, 9);
  store.set_translation(5, float3(0, 3, 0));
  store.set_non_uniform_scale(5, float3(1, 2, 3));
  Propagator gpu = make_propagator(ctx(), GetParam().options);
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  store.mark_statics_baked();
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "the Static baked"), 1.0);
  store.mark_statics_baked();

  store.set_translation(3, float3(0, 0, 2));         // values alone
  store.set_rotation(2, quat(0.6f, 0.0f, 0.8f, 0.0f));  // its composite rotation changes
  store.set_translation(4, float3(5, 0, 0));         // a baked Static keeps its value
  store.set_non_uniform_scale(5, float3(3, 2, 1));   // values, and attached to 9 ...
  store.create(9);                                   // ... created in the same frame
  store.set_translation(9, float3(0, 0, 7));
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "mixed frame"), 1.0);
  EXPECT_EQ(gpu.last_frame().values_only_entities, 2u) << "entities 3 and 5";
  EXPECT_EQ(gpu.last_frame().staged_entities, 6u) << "3 and 5 alone, then 2, 4, 5, 9 whole";
  store.mark_statics_baked();

  store.set_translation(1, float3(-1, 0, 0));
  store.set_translation(3, float3(1, 1, 1));
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "values frame"), 1.0);
  EXPECT_EQ(gpu.last_frame().values_only_entities, 2u);
  EXPECT_EQ(gpu.last_frame().staged_entities, 2u);
}

// Plain entities only (Translation, Rotation, Scale: no override or Static asks the passes to
// test which entity keeps its own matrix), then parents despawned and subtrees re-parented
// higher up, never compacted: the children become roots where they stand (a chain's middle, a
// bundle's, a wide level's) and every pass must keep their own matrices there, then compaction
// brings them up a few a frame.
TEST_P(GpuFrames, RootsLeftBelowLevelZeroKeepTheirOwnMatrices) {
  EntityStore store;
  ValueSource v(57);
  auto plain = [&](EntityId e) {
    store.create(e);
    store.set_translation(e, v.vec(3));
    store.set_rotation(e, v.unit_quat());
    if (e % 3 == 0) store.set_scale(e, 0.5f + 0.5f * float(v.below(3)));
  };
  // A chain of 300 (ids 0..299), a bundle of 4 chains of 120 (1000 + 4 * level + p) under a
  // root (999), and a forest of 3,000 below a root (5000).
  for (EntityId e = 0; e < 300; ++e) {
    plain(e);
    if (e) store.set_parent(e, e - 1);
  }
  plain(999);
  for (EntityId l = 0; l < 120; ++l)
    for (EntityId p = 0; p < 4; ++p) {
      plain(1000 + 4 * l + p);
      store.set_parent(1000 + 4 * l + p, l ? 1000 + 4 * (l - 1) + p : 999);
    }
  plain(5000);
  for (EntityId e = 5001; e < 8000; ++e) {
    plain(e);
    store.set_parent(e, 5000 + v.below(e - 5000));
  }
  PropagatorOptions options = GetParam().options;
  options.compact_per_frame = 0;
  Propagator gpu = make_propagator(ctx(), options);
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  EXPECT_EQ(gpu.order().deep_roots(), 0u);

  store.destroy(100);                             // 101..299 hang from a root at level 101
  store.destroy(1000 + 4 * 50 + 2);               // one chain of the bundle, from level 52
  for (EntityId e = 5100; e < 5400; e += 7) store.destroy(e);  // forest parents
  store.set_parent(1000 + 4 * 80 + 1, 999);       // re-parented higher up: stays deeper
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "parents despawned"), 1.0);
  EXPECT_GE(gpu.order().deep_roots(), 3u);
  EXPECT_EQ(gpu.last_frame().compacted_entities, 0u);
  EXPECT_EQ(gpu.order().level_of(store.slot_of(101)), 101u) << "a root where it stood";

  // Values above and below the roots left deep, on a root, and a root moved again.
  for (int frame = 0; frame < 4; ++frame) {
    for (EntityId e : {0u, 99u, 101u, 250u, 1000u + 4 * 51 + 2, 1000u + 4 * 60 + 2, 999u, 5000u})
      if (store.contains(e)) store.set_translation(e, v.vec(3));
    if (frame == 2) store.set_parent(200, 5000);  // higher up: 200.. keep their levels
    const std::string what = "values frame " + std::to_string(frame);
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
  }

  // Compaction on: the same scene a few entities a frame, then all of it.
  options.compact_per_frame = PropagatorOptions{}.compact_per_frame;
  Propagator compacting = make_propagator(ctx(), options);
  ASSERT_LE(frame_and_compare(compacting, cpu, store, "another propagator, first frame"), 1.0);
  store.destroy(1);
  store.destroy(1000 + 4 * 10 + 3);
  ASSERT_LE(frame_and_compare(compacting, cpu, store, "despawned, compacted"), 1.0);
  EXPECT_EQ(compacting.order().deep_roots(), 0u) << "512 a frame: the roots first";
  EXPECT_GT(compacting.last_frame().compacted_entities, 100u);
}

// Spawns and despawns scatter a wide level; with SlotOrder::Restore (forced here, whatever the
// device) its entries are sorted in the frame that finds enough of them scattered, the order's
// upload sends the level, and every frame, before, at and after the sort, matches the
// reference, under every strategy.
TEST_P(GpuFrames, WideLevelsPutBackInSlotOrderMatchTheReference) {
  EntityStore store;
  ValueSource v(71);
  auto plain = [&](EntityId e, EntityId parent) {
    store.create(e);
    store.set_translation(e, v.vec(3));
    store.set_rotation(e, v.unit_quat());
    if (e % 5 == 0) store.set_scale(e, 0.5f + 0.5f * float(v.below(3)));
    if (parent != LevelOrder::kNone) store.set_parent(e, parent);
  };
  constexpr EntityId kRoots = 32, kWide = 3000;
  for (EntityId r = 0; r < kRoots; ++r) plain(r, LevelOrder::kNone);
  std::vector<EntityId> wide;
  for (EntityId c = 0; c < kWide; ++c) {
    plain(100 + c, c % kRoots);
    wide.push_back(100 + c);
  }
  for (EntityId g = 0; g < 600; ++g) plain(50000 + g, 100 + v.below(kWide));
  PropagatorOptions options = GetParam().options;
  options.slot_order = SlotOrder::Restore;
  options.slot_order_min_entries = 2000;
  Propagator gpu = make_propagator(ctx(), options);
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  EntityId next = 60000;
  uint32_t sorted_frames = 0;
  // Despawns in one frame, spawns in the next: a slot freed and taken again within one frame
  // keeps its entry, which scatters nothing.
  for (int frame = 1; frame <= 12; ++frame) {
    std::vector<size_t> victims;
    for (int k = 0; k < 200; ++k) {
      const size_t victim = v.below(uint32_t(wide.size()));
      if (frame % 2 == 1) {
        if (std::find(victims.begin(), victims.end(), victim) != victims.end()) continue;
        victims.push_back(victim);
        store.destroy(wide[victim]);  // its children, if any, become roots where they stand
        wide[victim] = next++;
      } else if (!store.contains(wide[victim])) {
        plain(wide[victim], EntityId(v.below(kRoots)));
      }
    }
    for (int k = 0; k < 50; ++k) {
      const EntityId e = wide[v.below(uint32_t(wide.size()))];
      if (store.contains(e)) store.set_translation(e, v.vec(3));
    }
    const std::string what = "churn frame " + std::to_string(frame);
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    const FrameStats& fs = gpu.last_frame();
    if (fs.slot_ordered_entities == 0) continue;
    ++sorted_frames;
    const LevelOrder::Segment seg = gpu.order().levels()[1];
    EXPECT_EQ(fs.slot_ordered_entities, seg.count) << what;
    EXPECT_TRUE(std::is_sorted(gpu.order().entries().begin() + seg.begin,
                               gpu.order().entries().begin() + seg.begin + seg.count))
        << what;
    EXPECT_GE(fs.order_entries_uploaded, seg.count) << what << ": the level is sent";
  }
  EXPECT_GE(sorted_frames, 1u);
  // A frame of values alone sorts nothing (only structural frames maintain the order).
  store.set_translation(wide[0], v.vec(3));
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "values alone"), 1.0);
  EXPECT_EQ(gpu.last_frame().slot_ordered_entities, 0u);
}

// Frames of values alone over a deep scene (a chain, a bundle of chains, a forest) reuse the
// whole-order plan of the frame before (planning is O(levels)) and the level table the GPU
// holds (8 bytes a level, not sent again); a structural edit, and the frames after it, plan
// afresh; every frame matches the reference.
TEST_P(GpuFrames, ValuesFramesReuseThePlanUntilTheOrderChanges) {
  EntityStore store;
  ValueSource v(63);
  for (EntityId e = 0; e < 600; ++e) {
    store.create(e);
    store.set_translation(e, v.vec(2));
    if (e) store.set_parent(e, e - 1);
  }
  for (EntityId l = 0; l < 100; ++l)
    for (EntityId p = 0; p < 3; ++p) {
      const EntityId e = 1000 + 3 * l + p;
      store.create(e);
      store.set_rotation(e, v.unit_quat());
      store.set_parent(e, l ? e - 3 : 0);
    }
  for (EntityId e = 2000; e < 6000; ++e) {
    store.create(e);
    store.set_translation(e, v.vec(2));
    if (e > 2000) store.set_parent(e, 2000 + v.below(e - 2000));
  }
  PropagatorOptions options = GetParam().options;
  options.work_list_max = 0;  // whole-order frames
  Propagator gpu = make_propagator(ctx(), options);
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  uint32_t reused = 0;
  for (int frame = 0; frame < 8; ++frame) {
    for (int k = 0; k < 40; ++k) store.set_translation(v.below(6000), v.vec(2));
    if (frame == 4) store.set_parent(300, 2500);  // the chain's foot moves: plan afresh
    if (frame == 6)  // 200 spawned below one parent: appended in a row, one copy, no pairs
      for (EntityId e = 7000; e < 7200; ++e) {
        store.create(e);
        store.set_translation(e, v.vec(2));
        store.set_parent(e, 2000);
      }
    const std::string what = "frame " + std::to_string(frame);
    ASSERT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    const FrameStats& fs = gpu.last_frame();
    if (frame < 4) {
      EXPECT_TRUE(fs.plan_reused) << what << ": the first frame's plan";
    }
    if (fs.plan_reused) {  // the deltas alone (values not written in place): no table, no order
      EXPECT_EQ(fs.upload_bytes,
                (fs.values_only_entities - fs.values_in_place) * sizeof(gpu::ValueDelta) +
                    (fs.staged_entities - fs.values_only_entities) * sizeof(gpu::EntityDelta))
          << what;
    }
    if (frame == 4 || frame == 6) {
      EXPECT_FALSE(fs.plan_reused) << what;
    }
    reused += fs.plan_reused;
  }
  // After a structural frame whose order changes went as pairs, the next frame plans afresh.
  EXPECT_GE(reused, 4u);
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, GpuFrames,
    ::testing::Values(Strategy{"Default", {}},
                      Strategy{"WorkListAlways", {.work_list_max = UINT32_MAX}},
                      Strategy{"WholeOrderSkippingTheUnchanged", {.work_list_max = 0}},
                      Strategy{"DeviceAddresses", {.prefer_descriptors = false}},
                      Strategy{"DeviceAddressesWithTexelReads",
                               {.prefer_descriptors = false, .texel_reads = TexelReads::Always}},
                      Strategy{"WorkgroupNarrowWalk", {.narrow_walk = NarrowWalk::Workgroup}},
                      Strategy{"SingleInvocationNarrowWalk",
                               {.narrow_walk = NarrowWalk::SingleInvocation}},
                      Strategy{"SingleInvocationWithoutSubgroupChains",
                               {.narrow_walk = NarrowWalk::SingleInvocation,
                                .subgroup_chains = false}},
                      Strategy{"GeneralShaders", {.specialize = false}},
                      // Value changes as records the GPU scatters (a discrete GPU's way), or
                      // written in place by update() however few (this CPU device does so by
                      // default only when they are dense).
                      Strategy{"StagedValues", {.value_writes = ValueWrites::Staged}},
                      Strategy{"ValuesInPlace", {.value_writes = ValueWrites::InPlace}},
                      Strategy{"ValuesInPlaceWholeOrderSkippingTheUnchanged",
                               {.value_writes = ValueWrites::InPlace, .work_list_max = 0}},
                      // ... beside passes that mark what they recompute themselves.
                      Strategy{"ValuesInPlaceSkippingPointerJumpingScans",
                               {.value_writes = ValueWrites::InPlace,
                                .work_list_max = 0,
                                .narrow_walk = NarrowWalk::Jump,
                                .scan_runs = ScanRuns::Always}},
                      Strategy{"ValuesInPlaceSkippingFusedLevels",
                               {.value_writes = ValueWrites::InPlace,
                                .work_list_max = 0,
                                .level_passes = LevelPasses::Fused}},
                      // Consecutive levels in one dispatch (measured slower than a dispatch a
                      // level on an H200, an option), and a GPU's default walks and passes.
                      Strategy{"FusedLevels", {.level_passes = LevelPasses::Fused}},
                      Strategy{"FusedLevelsPointerJumping",
                               {.narrow_walk = NarrowWalk::Jump,
                                .level_passes = LevelPasses::Fused}},
                      Strategy{"FusedLevelsWholeOrderSkippingTheUnchanged",
                               {.work_list_max = 0, .level_passes = LevelPasses::Fused}},
                      // The top levels in one dispatch, each entity climbing its ancestors (a
                      // GPU's default), in frames of every kind and skipping the unchanged.
                      Strategy{"ClimbedTopLevels", {.climb_top = ClimbTop::Always}},
                      Strategy{"ClimbedTopLevelsWholeOrderSkippingTheUnchanged",
                               {.work_list_max = 0, .climb_top = ClimbTop::Always}},
                      Strategy{"ClimbedTopLevelsPointerJumpingScans",
                               {.narrow_walk = NarrowWalk::Jump,
                                .scan_runs = ScanRuns::Always,
                                .climb_top = ClimbTop::Always}},
                      // Wide passes storing through shared memory (a GPU's default; lavapipe's
                      // Default stores directly), in frames of every kind and skipping the
                      // unchanged (by device address: GpuRandom's test of them).
                      Strategy{"SharedWideStores", {.wide_stores = WideStores::Shared}},
                      // A CPU device's way of storing matrices, and a GPU's.
                      Strategy{"MatricesStoredAsWords", {.world_writes = WorldWrites::Words}},
                      Strategy{"MatricesStoredAsFloatVectors",
                               {.world_writes = WorldWrites::Vectors}},
                      Strategy{"SharedWideStoresWholeOrderSkippingTheUnchanged",
                               {.work_list_max = 0, .wide_stores = WideStores::Shared}},
                      Strategy{"SeparateLevelPassesPointerJumping",
                               {.narrow_walk = NarrowWalk::Jump,
                                .level_passes = LevelPasses::Separate}},
                      // Deep runs of aligned levels scanned (a GPU's default beside jumping),
                      // or jumped like the rest.
                      Strategy{"ScannedRunsPointerJumping",
                               {.narrow_walk = NarrowWalk::Jump, .scan_runs = ScanRuns::Always}},
                      Strategy{"PointerJumpingWithoutScans",
                               {.narrow_walk = NarrowWalk::Jump, .scan_runs = ScanRuns::Never}},
                      Strategy{"ScannedRunsSingleInvocation",
                               {.narrow_walk = NarrowWalk::SingleInvocation,
                                .scan_runs = ScanRuns::Always}},
                      // Levels left deeper than depths (despawned parents' children roots where
                      // they stand, re-parented subtrees kept in place): never compacted, a few
                      // entities a frame, and exact after every frame.
                      Strategy{"LazyLevelsNeverCompacted", {.compact_per_frame = 0}},
                      Strategy{"LazyLevelsCompactedFewAFrameSingleInvocation",
                               {.compact_per_frame = 3,
                                .narrow_walk = NarrowWalk::SingleInvocation}},
                      Strategy{"ExactLevelsEveryFrame", {.compact_per_frame = UINT32_MAX}},
                      // 256 slots a piece (16 KiB of LocalToWorld): device addresses through
                      // the piece tables, every kind of frame.
                      Strategy{"TinyPieces", {.max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesWorkListAlways",
                               {.work_list_max = UINT32_MAX, .max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesWholeOrderSkippingTheUnchanged",
                               {.work_list_max = 0, .max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesSingleInvocationNarrowWalk",
                               {.narrow_walk = NarrowWalk::SingleInvocation,
                                .max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesFusedLevels",
                               {.level_passes = LevelPasses::Fused,
                                .max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesClimbedTopLevels",
                               {.climb_top = ClimbTop::Always,
                                .max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesScannedRuns",
                               {.scan_runs = ScanRuns::Always,
                                .max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesMatricesStoredAsWords",
                               {.world_writes = WorldWrites::Words,
                                .max_buffer_bytes = kMinBufferBytes}},
                      Strategy{"TinyPiecesValuesInPlace",
                               {.value_writes = ValueWrites::InPlace,
                                .max_buffer_bytes = kMinBufferBytes}},
                      // Value deltas staged across many pieces (341 a piece).
                      Strategy{"TinyPiecesStagedValues",
                               {.value_writes = ValueWrites::Staged,
                                .max_buffer_bytes = kMinBufferBytes}}),
    [](const ::testing::TestParamInfo<Strategy>& param) { return param.param.name; });

}  // namespace
}  // namespace tprop::test
