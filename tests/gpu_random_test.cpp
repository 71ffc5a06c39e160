// Randomized scenes against CpuReference: every component mix, depths up to 64, frames of value
// changes and of hierarchy changes, a million entities once, and the deep chains that the
// narrow-level batching (and llvmpipe's 65,535-iteration loop limit) must get right.
#include "gpu_test_support.h"

#include "../shaders/pass_features.h"
#include "../shaders/scene_layout.h"
#include "scene_generators.h"

namespace tprop::test {
namespace {

class GpuRandom : public GpuTest {};

TEST_F(GpuRandom, RandomScenesMatchTheReferenceOverValueAndHierarchyFrames) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    EntityStore store;
    ValueSource v(seed);
    const uint32_t n = 20000;
    build_random_scene(store, n, 64, v);
    // Seeds 2 and 3 leave the levels the hierarchy frame deepens (despawned parents' children
    // roots where they stand) as they are, or compact a few a frame.
    const uint32_t compact = seed == 1 ? PropagatorOptions{}.compact_per_frame : seed == 2 ? 0 : 7;
    Propagator gpu = make_propagator(ctx(), {.compact_per_frame = compact});
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);

    // Values only: a tenth of the entities change, some gain or lose components.
    for (uint32_t k = 0; k < n / 10; ++k) {
      const EntityId e = v.below(n);
      store.set_translation(e, v.vec(5));
      add_features(store, e, random_features(v) & ~(kStatic | kOverride), v);
      if (k % 5 == 0) store.remove(e, Component::CompositeRotation);
    }
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "value frame"), 1.0);
    EXPECT_FALSE(gpu.last_frame().hierarchy_changed);

    // Hierarchy: reparenting (cycles included), destroying, creating.
    for (uint32_t k = 0; k < n / 100; ++k) store.set_parent(v.below(n), v.below(n));
    for (uint32_t k = 0; k < n / 200; ++k) store.destroy(v.below(n));
    for (uint32_t k = 0; k < n / 200; ++k) {
      const EntityId e = n + k;
      store.create(e);
      add_features(store, e, random_features(v), v);
      store.set_parent(e, v.below(n + k));
    }
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "hierarchy frame"), 1.0);
    EXPECT_TRUE(gpu.last_frame().hierarchy_changed);
    if (seed > 1) {
      EXPECT_GT(gpu.order().deep_roots(), 0u);
    }
    EXPECT_FALSE(gpu.last_frame().full_upload) << "structural edits upload what they touch";

    // Statics baked last frame now read back frozen; new Statics and overrides appear.
    for (uint32_t k = 0; k < n / 50; ++k) {
      const EntityId e = v.below(n);
      store.set_translation(e, v.vec(5));
      if (k % 2) store.add(e, Component::Static);
      if (k % 3 == 0) store.add(e, Component::WriteGroupOverride);
      if (k % 7 == 0) store.remove(e, Component::Static);
    }
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "statics frame"), 1.0);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "quiet frame"), 1.0);
  }
}

TEST_F(GpuRandom, AMillionEntitiesOfEveryMixUpToDepth64) {
  EntityStore store;
  ValueSource v(2024);
  build_random_scene(store, 1'000'000, 64, v);
  Propagator gpu = make_propagator(ctx());
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "million"), 1.0);
  EXPECT_EQ(gpu.last_frame().entities, 1'000'000u);
  EXPECT_GE(gpu.last_frame().levels, 60u);
}

// Translations of one unit along x: at depth d the world x is exactly d + 1 in float, so a
// propagation loop cut short anywhere (llvmpipe ends shader loops after 65,535 iterations) shows
// as a wrong integer.
TEST_F(GpuRandom, AHundredThousandDeepChainIsPropagatedToTheLastLevel) {
  const uint32_t n = 100'000;
  EntityStore store = unit_step_chain(n);
  struct Walk {
    const char* what;
    NarrowWalk walk;
    ScanRuns scan;
    uint32_t scan_tiles_max = 0;
  };
  for (const Walk w : {Walk{"workgroup walk", NarrowWalk::Workgroup, ScanRuns::Never},
                       Walk{"single-invocation walk", NarrowWalk::SingleInvocation,
                            ScanRuns::Never},
                       Walk{"pointer jumping", NarrowWalk::Jump, ScanRuns::Never},
                       Walk{"scan", NarrowWalk::Jump, ScanRuns::Always},
                       Walk{"scan in pieces of 16 tiles", NarrowWalk::SingleInvocation,
                            ScanRuns::Always, 16}}) {
    SCOPED_TRACE(w.what);
    store.set_translation(0, float3(1, 0, 0));
    Propagator gpu = make_propagator(ctx(), {.narrow_walk = w.walk,
                                             .scan_runs = w.scan,
                                             .scan_tiles_max = w.scan_tiles_max});
    ASSERT_TRUE(gpu.run(store).ok());
    // One dispatch per 4096 levels, not one per level; a scan's three whatever the depth.
    EXPECT_LE(gpu.last_frame().dispatches, 1 + (n + gpu::kNarrowLevelsPerDispatch - 1) /
                                                   gpu::kNarrowLevelsPerDispatch);
    if (w.scan == ScanRuns::Always) {
      // Pieces of 16 tiles of 1,024 levels: 7, each starting from the last one's LocalToWorld.
      static_assert(gpu::scan_tile_levels(1) == 1024);
      const uint32_t pieces = w.scan_tiles_max ? 7u : 1u;
      EXPECT_EQ(gpu.last_frame().scan_runs, pieces);
      EXPECT_EQ(gpu.last_frame().dispatches, 3u * pieces);
    }
    auto world = gpu.read_back();
    ASSERT_TRUE(world.ok());
    ASSERT_EQ(world->size(), n);
    uint32_t wrong = 0;
    for (uint32_t slot = 0; slot < n; ++slot) {
      const EntityId id = store.id_at(slot);
      if ((*world)[slot][3] != float4(float(id + 1), 0, 0, 1) && wrong++ < 5)
        ADD_FAILURE() << "entity " << id << " at x = " << (*world)[slot][3].x << ", expected "
                      << id + 1;
    }
    EXPECT_EQ(wrong, 0u);

    // A value-only change at the top moves everything below it.
    store.set_translation(0, float3(1, 0, 5));
    ASSERT_TRUE(gpu.run(store).ok());
    EXPECT_FALSE(gpu.last_frame().hierarchy_changed);
    world = gpu.read_back();
    ASSERT_TRUE(world.ok());
    EXPECT_EQ((*world)[store.slot_of(n - 1)][3], float4(float(n), 0, 5, 1));
  }
}

// Pointer jumping reassociates the products of a deep run: on scenes of every component mix
// (pivots, composite matrices, user-written matrices, Statics, overrides, ParentScaleInverse)
// hundreds of levels deep, over value, hierarchy and Static frames, it must stay within the
// reference's tolerance, and it must be what ran.
TEST_F(GpuRandom, PointerJumpingMatchesTheReferenceOnDeepScenesOverFrames) {
  // Whole runs, and runs cut into parts of at most 500 entities (the next part's first level
  // then finds its parents final, as a run's first level does), and with every buffer at most
  // 16 KiB: every array in pieces (the order, the levels, the rare and frozen tables...) and
  // runs cut to what one scratch buffer holds (117 entities).
  // And with the levels edits leave deeper than depths never compacted: runs then hold roots
  // below their first level and children more than one level below their parents.
  struct Case {
    const char* what;
    uint32_t run_max;
    uint64_t buffer_max;
    uint32_t compact = PropagatorOptions{}.compact_per_frame;
  };
  for (const Case c : {Case{"whole runs", 0, 0}, Case{"runs of at most 500", 500, 0},
                       Case{"16 KiB buffers", 0, kMinBufferBytes},
                       Case{"levels never compacted", 0, 0, 0}}) {
    SCOPED_TRACE(c.what);
    EntityStore store;
    ValueSource v(41);
    const uint32_t n = 6000;
    // Mostly under one of the last three entities, so depth grows to the cap of 400.
    std::vector<uint32_t> depth(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      store.create(i);
      add_features(store, i, random_features(v), v);
      if (i == 0 || v.below(100) < 2) continue;
      const uint32_t parent = i - 1 - v.below(std::min<uint32_t>(i, 3));
      if (depth[parent] + 1 >= 400) continue;
      depth[i] = depth[parent] + 1;
      store.set_parent(i, parent);
    }
    Propagator gpu = make_propagator(ctx(), {.compact_per_frame = c.compact,
                                             .narrow_walk = NarrowWalk::Jump,
                                             .scan_runs = ScanRuns::Never,
                                             .jump_run_max_entities = c.run_max,
                                             .max_buffer_bytes = c.buffer_max});
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    EXPECT_GE(gpu.last_frame().levels, 150u);
    EXPECT_GE(gpu.last_frame().jump_runs, c.run_max || c.buffer_max ? 4u : 1u)
        << "the deep runs were jumped";
    if (c.buffer_max) {
      EXPECT_LE(gpu.last_frame().largest_buffer_bytes, c.buffer_max);
      EXPECT_GE(gpu.last_frame().slot_pieces, 6000u / 256u);
    }
    uint32_t skipping_jumps = 0;  // frames that jumped runs while skipping the unchanged
    for (int frame = 0; frame < 6; ++frame) {
      for (uint32_t k = 0; k < 60; ++k) store.set_translation(v.below(n), v.vec(5));
      if (frame % 2) {
        for (uint32_t k = 0; k < 20; ++k) store.set_parent(v.below(n), v.below(n));
        for (uint32_t k = 0; k < 5; ++k) store.destroy(v.below(n));
      }
      if (frame == 3)
        for (uint32_t k = 0; k < 30; ++k) store.add(v.below(n), Component::Static);
      const std::string what = "frame " + std::to_string(frame);
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      skipping_jumps += gpu.last_frame().skip_unchanged && gpu.last_frame().jump_runs > 0;
    }
    EXPECT_GE(skipping_jumps, 1u) << "runs jumped with dirty bits, clean entities left alone";
    if (c.compact == 0) {
      EXPECT_GT(gpu.order().deep_roots(), 0u);
    }
  }
}

// Many parallel chains make deep levels wider than a narrow level (here 150 entities at each of
// 300 levels, as a 10M mixed scene's 100 chains 10,000 deep): walked level by level they cost a
// dispatch each (on an H200 about 14 us, 145 ms for that scene), so pointer jumping takes runs
// of levels up to kJumpLevelMax wide. On every component mix, over frames of values, re-parents
// and despawns, it must match the reference, and be what ran; with 16 KiB buffers (scratch for
// 117 entities) the levels are too wide to jump and go level by level, still right.
TEST_F(GpuRandom, DeepRunsOfParallelChainsArePointerJumpedNotWalkedLevelByLevel) {
  const uint32_t width = 150, depth = 300;
  for (const uint64_t buffer_max : {uint64_t(0), kMinBufferBytes}) {
    SCOPED_TRACE(buffer_max ? "16 KiB buffers" : "one buffer an array");
    EntityStore store;
    ValueSource v(77);
    const uint32_t n = 1 + width * depth;
    store.create(0);
    for (uint32_t i = 1; i < n; ++i) {
      store.create(i);
      add_features(store, i, random_features(v), v);
      store.set_parent(i, i <= width ? 0 : i - width);
    }
    // Separate level passes, so that levels not jumped show as a dispatch each (none climbed).
    Propagator gpu = make_propagator(ctx(), {.narrow_walk = NarrowWalk::Jump,
                                             .level_passes = LevelPasses::Separate,
                                             .scan_runs = ScanRuns::Never,
                                             .climb_top = ClimbTop::Never,
                                             .max_buffer_bytes = buffer_max});
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    EXPECT_EQ(gpu.last_frame().levels, depth + 1);
    if (buffer_max) {
      EXPECT_EQ(gpu.last_frame().jump_runs, 0u);
      EXPECT_GE(gpu.last_frame().dispatches, depth);
    } else {
      EXPECT_EQ(gpu.last_frame().jump_runs, 1u) << "one run from the root down";
      // Index, init, ceil(log2(301)) = 9 rounds, write; and the frame's copies and scatter.
      EXPECT_LE(gpu.last_frame().dispatches, 16u);
    }
    for (int frame = 0; frame < 4; ++frame) {
      for (uint32_t k = 0; k < 200; ++k) store.set_translation(1 + v.below(n - 1), v.vec(5));
      if (frame % 2) {
        // Re-parent within the chains' depth (a level's entity under one a level up), despawn.
        for (uint32_t k = 0; k < 20; ++k) {
          const uint32_t e = width + 1 + v.below(n - 1 - width);
          store.set_parent(e, e - width - v.below(std::min<uint32_t>(e - width, width)));
        }
        for (uint32_t k = 0; k < 5; ++k) store.destroy(1 + v.below(n - 1));
      }
      const std::string what = "frame " + std::to_string(frame);
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      if (!buffer_max) {
        EXPECT_GE(gpu.last_frame().jump_runs, 1u) << what;
      }
    }
  }
}

// Deep runs of aligned levels (a chain; parallel chains, here 150 at each of 300 levels) are
// scanned: three dispatches whatever the depth (scan.comp), the products reassociated by tiles.
// On every component mix, with non-affine matrices in the chain and a user-written LocalToWorld
// mid-chain (it stands at the root of what is below it), over frames that skip the unchanged
// (rotations changed above and below that override, at the last link, whose 100 children read
// its dirty mark in the level after the run), Statics, re-parents and despawns (which break the
// alignment where they land: those levels go as before), with work lists, in scratch pieces of a
// few tiles (a piece's first level finds its parents final) and on a 2D grid of workgroups, it
// must match the reference, and be what ran.
TEST_F(GpuRandom, DeepRunsOfAlignedLevelsAreScannedInThreeDispatchesAndMatchTheReference) {
  const uint32_t chain = 3000, width = 150, depth = 300, override_link = 1500;
  struct Case {
    const char* what;
    PropagatorOptions options;
  };
  for (const Case& c :
       {Case{"beside pointer jumping, the whole order skipping the unchanged",
             {.work_list_max = 0, .narrow_walk = NarrowWalk::Jump, .scan_runs = ScanRuns::Always}},
        Case{"beside the single-invocation walk", {.narrow_walk = NarrowWalk::SingleInvocation,
                                                   .scan_runs = ScanRuns::Always}},
        Case{"work lists always", {.work_list_max = UINT32_MAX,
                                   .narrow_walk = NarrowWalk::Jump,
                                   .scan_runs = ScanRuns::Always}},
        Case{"pieces of 2 tiles", {.narrow_walk = NarrowWalk::SingleInvocation,
                                   .scan_runs = ScanRuns::Always,
                                   .scan_tiles_max = 2}},
        Case{"a 2D grid", {.narrow_walk = NarrowWalk::Jump,
                           .scan_runs = ScanRuns::Always,
                           .max_groups_per_dimension = 3}}}) {
    SCOPED_TRACE(c.what);
    EntityStore store;
    ValueSource v(93);
    // A chain under entity 0, the parallel chains under its 100th link, a wide level under its
    // last.
    uint32_t n = 0;
    store.create(n++);
    for (uint32_t i = 0; i < chain; ++i, ++n) {
      store.create(n);
      add_features(store, n, random_features(v), v);
      if (n % 97 == 5) {
        store.remove(n, Component::Rotation);  // non-affine: the scan keeps 4-row matrices
        store.set_matrix(n, MatrixComponent::CompositeRotation, v.projective());
      }
      store.set_parent(n, n - 1);
    }
    store.add(override_link, Component::WriteGroupOverride);
    store.set_matrix(override_link, MatrixComponent::LocalToWorld, v.affine());
    const uint32_t last_link = chain, bundle_top = n;
    for (uint32_t i = 0; i < width * depth; ++i, ++n) {
      store.create(n);
      add_features(store, n, random_features(v), v);
      store.set_parent(n, i < width ? 100 : n - width);
    }
    for (uint32_t i = 0; i < 100; ++i, ++n) {
      store.create(n);
      add_features(store, n, random_features(v), v);
      store.set_parent(n, last_link);
    }
    Propagator gpu = make_propagator(ctx(), c.options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    EXPECT_TRUE(gpu.last_frame().pass_features & gpu::kFeatureProjective);
    if (c.options.scan_tiles_max) {
      // The chain above the bundle in 1 piece (99 levels), the chain beside it (2,900 levels)
      // in 2 pieces of up to 2,048 levels, the bundle (300 levels; 32 positions a tile, 32
      // levels) in 5 of up to 64 levels.
      static_assert(gpu::scan_tile_levels(1) == 1024 && gpu::scan_tile_levels(width) == 32);
      EXPECT_EQ(gpu.last_frame().scan_runs, 1u + 2u + 5u);
    } else {
      // The chain above the bundle, the chain beside it, the bundle.
      EXPECT_EQ(gpu.last_frame().scan_runs, 3u);
      EXPECT_EQ(gpu.last_frame().jump_runs, 0u);
      EXPECT_LE(gpu.last_frame().dispatches, 3u * 3u + 2u);
    }
    if (c.options.max_groups_per_dimension == 3) {
      EXPECT_GT(gpu.last_frame().grid_rows, 1u);
    }
    // Links whose rotation turns the whole chain below them: above the override in the first
    // tile and in the next, below it, the last.
    const uint32_t turned[] = {50, 300, 1600, last_link};
    uint32_t skipping_scans = 0, work_list_scans = 0;
    for (int frame = 0; frame < 8; ++frame) {
      store.set_rotation(turned[frame % 4], v.unit_quat());
      if (frame == 4)
        for (uint32_t k = 0; k < 100; ++k) store.set_rotation(1 + v.below(n - 1), v.unit_quat());
      if (frame == 5)
        for (uint32_t k = 0; k < 30; ++k) store.add(1 + v.below(n - 1), Component::Static);
      if (frame == 6) {
        // Re-parent within the bundle's depth (a level's entity under one a level up), despawn.
        for (uint32_t k = 0; k < 10; ++k) {
          const uint32_t e = bundle_top + width + v.below(width * (depth - 1));
          store.set_parent(e,
                           e - width - v.below(std::min<uint32_t>(e - width - bundle_top, width)));
        }
        for (uint32_t k = 0; k < 5; ++k) store.destroy(1 + v.below(chain + width * depth - 1));
      }
      const std::string what = "frame " + std::to_string(frame);
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      const FrameStats& f = gpu.last_frame();
      skipping_scans += f.skip_unchanged && f.scan_runs > 0;
      work_list_scans += !f.full_pass && f.scan_runs > 0;
    }
    // Turning links 1600 and the last changes fewer than 4,096 entities: a work list, unless
    // the strategy says otherwise.
    if (c.options.work_list_max == UINT32_MAX) {
      EXPECT_GE(work_list_scans, 3u) << "work lists' chains scanned";
    } else if (c.options.work_list_max == 0) {
      // Every frame but the last two: their broken alignment beside pointer jumping would take
      // more dispatches scanned, so the run is jumped whole.
      EXPECT_GE(skipping_scans, 6u) << "runs scanned with dirty bits, clean entities left alone";
    } else {
      EXPECT_GE(skipping_scans, 2u);
      EXPECT_GE(work_list_scans, 2u);
    }
  }
}

// A forest of n entities of every component mix, breadth first, 2 to 6 children each: about 9
// levels, 1, 3, 12, ... entities wide down to some thousands.
void build_breadth_first_forest(EntityStore& store, ValueSource& v, uint32_t n) {
  store.create(0);
  for (uint32_t i = 1; i < n; ++i) {
    store.create(i);
    add_features(store, i, random_features(v), v);
    store.set_parent(i, (i - 1) / (2 + v.below(5)));
  }
}

// One frame's structural edits of such a forest: 30 re-parents (cycles among them), 20
// despawns, 20 spawns (ids from `next` on) under random parents.
void structural_edits(EntityStore& store, ValueSource& v, uint32_t n, EntityId& next) {
  for (uint32_t k = 0; k < 30; ++k) store.set_parent(1 + v.below(n - 1), v.below(n));
  for (uint32_t k = 0; k < 20; ++k) store.destroy(1 + v.below(n - 1));
  for (uint32_t k = 0; k < 20; ++k, ++next) {
    store.create(next);
    add_features(store, next, random_features(v), v);
    store.set_parent(next, v.below(n));
  }
}

// LevelPasses::Fused: a forest's levels (up to kFusedLevelMax wide) in one dispatch, each
// workgroup a chunk of one level
// that waits for the level above to be done. On a scene of every component mix, in frames of
// values, re-parents, despawns and spawns, whole-order and work-list frames, with lazy levels
// left uncompacted (children more than one level below their parents: a chunk must wait for
// every level above, not only the next), and with more chunks than one row of workgroups (the
// 2D grid's extra workgroups take no chunk of their own), it must match the reference.
TEST_F(GpuRandom, FusedLevelsEvaluateAForestInOneDispatchAndMatchTheReference) {
  struct Case {
    const char* what;
    PropagatorOptions options;
  };
  const Case cases[] = {
      // The top levels fused too, not climbed (ClimbTop's default on a GPU).
      {"whole order",
       {.work_list_max = 0, .level_passes = LevelPasses::Fused, .climb_top = ClimbTop::Never}},
      {"work lists",
       {.work_list_max = UINT32_MAX, .level_passes = LevelPasses::Fused,
        .climb_top = ClimbTop::Never}},
      {"never compacted",
       {.work_list_max = 0, .compact_per_frame = 0, .level_passes = LevelPasses::Fused,
        .climb_top = ClimbTop::Never}},
      {"rows of 7 workgroups",
       {.work_list_max = 0, .level_passes = LevelPasses::Fused, .climb_top = ClimbTop::Never,
        .max_groups_per_dimension = 7}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EntityStore store;
    ValueSource v(5);
    const uint32_t n = 12000;
    build_breadth_first_forest(store, v, n);
    Propagator gpu = make_propagator(ctx(), c.options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    const FrameStats first = gpu.last_frame();
    EXPECT_GE(first.levels, 6u);
    // Each run of consecutive levels up to kFusedLevelMax wide in one dispatch (fused when it has
    // two levels or more), each wider level in its own.
    uint32_t wide = 0, runs = 0, fused = 0, run = 0;
    for (const LevelOrder::Segment& seg : gpu.order().levels()) {
      if (seg.count > kFusedLevelMax) {
        ++wide;
        fused += run >= 2 ? run : 0;
        run = 0;
        continue;
      }
      runs += run == 0;
      ++run;
    }
    fused += run >= 2 ? run : 0;
    EXPECT_GE(fused, 5u);
    EXPECT_EQ(first.fused_levels, fused);
    EXPECT_EQ(first.dispatches, runs + wide);
    uint32_t fused_frames = 0;
    EntityId next = n;
    for (int frame = 0; frame < 8; ++frame) {
      for (uint32_t k = 0; k < 300; ++k) store.set_translation(v.below(n), v.vec(5));
      if (frame % 2) structural_edits(store, v, n, next);
      const std::string what = "frame " + std::to_string(frame);
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      fused_frames += gpu.last_frame().fused_levels >= 2;
    }
    EXPECT_GE(fused_frames, 6u);
  }
}

// ClimbTop: a forest's top levels (from the roots, within climb_levels and climb_level_work) in one
// dispatch, each entity composing its own chain of ancestors. On a scene of every component mix
// (Statics frozen and baked, overrides, composites, ParentScaleInverse), in frames of values,
// re-parents (cycles made and broken), despawns and spawns, Statics added and removed, frames
// that skip the unchanged (an entity recomputed when a mark on its way to the root is this
// frame's), lazy levels left uncompacted (roots below level 0 end a chain), more chunks than one
// row of workgroups, both addressings and arrays in pieces, it must match the reference.
TEST_F(GpuRandom, ClimbedTopLevelsEvaluateInOneDispatchAndMatchTheReference) {
  struct Case {
    const char* what;
    PropagatorOptions options;
  };
  // A level of w entities at level l adds w * (l + 1) ancestor steps: 2,000 stops the climb after
  // five levels or so, and the levels below read its results as their parents'.
  const Case cases[] = {
      {"every level, skipping the unchanged", {.work_list_max = 0, .climb_top = ClimbTop::Always}},
      {"the top levels, skipping the unchanged",
       {.work_list_max = 0, .climb_top = ClimbTop::Always, .climb_level_work = 2000}},
      {"never compacted",
       {.work_list_max = 0, .compact_per_frame = 0, .climb_top = ClimbTop::Always,
        .climb_level_work = 2000}},
      {"work lists as well", {.climb_top = ClimbTop::Always, .climb_level_work = 2000}},
      {"rows of 7 workgroups",
       {.work_list_max = 0, .climb_top = ClimbTop::Always, .max_groups_per_dimension = 7}},
      {"device addresses in pieces, six levels",
       {.work_list_max = 0, .climb_top = ClimbTop::Always, .climb_levels = 6,
        .max_buffer_bytes = kMinBufferBytes}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EntityStore store;
    ValueSource v(9);
    const uint32_t n = 12000;
    build_breadth_first_forest(store, v, n);
    Propagator gpu = make_propagator(ctx(), c.options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    // The climb takes the leading levels within its limits (here each level is one step: the
    // narrow ones, up to 64 entities, a walk together); what is left goes a dispatch a level.
    const FrameStats first = gpu.last_frame();
    const auto& levels = gpu.order().levels();
    ASSERT_GE(levels.size(), 6u);
    const uint32_t most = std::clamp(c.options.climb_levels, 2u, gpu::kClimbLevelsMax);
    uint32_t climbed = 0;
    while (climbed < levels.size() && climbed < most &&
           uint64_t(levels[climbed].count) * (climbed + 1) <= c.options.climb_level_work)
      ++climbed;
    EXPECT_GE(climbed, 4u);
    EXPECT_EQ(first.climbed_levels, climbed);
    // Past a walk of narrow levels the climb must take whole steps: the levels here widen fast
    // enough that the walk (levels up to 64 wide) ends within the climb.
    uint32_t walked = 0;
    while (walked < levels.size() && levels[walked].count <= gpu::kNarrowLevelMax) ++walked;
    ASSERT_LE(walked, climbed);
    EXPECT_EQ(first.dispatches, 1 + uint32_t(levels.size()) - climbed);
    uint32_t climbing_frames = 0;
    EntityId next = n;
    for (int frame = 0; frame < 10; ++frame) {
      for (uint32_t k = 0; k < 300; ++k) store.set_translation(v.below(n), v.vec(5));
      // A change at the top: everything below it is recomputed, the rest is skipped.
      if (frame % 3 == 0) store.set_rotation(v.below(4), v.unit_quat());
      if (frame % 2) {
        structural_edits(store, v, n, next);
      } else {
        for (uint32_t k = 0; k < 40; ++k) {
          const EntityId e = v.below(n);
          if (!store.contains(e)) continue;
          if (k % 2) store.add(e, Component::Static);
          if (k % 5 == 0) store.remove(e, Component::Static);
        }
      }
      const std::string what = "frame " + std::to_string(frame);
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      climbing_frames += gpu.last_frame().climbed_levels >= 2;
    }
    if (c.options.work_list_max == 0) {
      EXPECT_EQ(climbing_frames, 10u);
    } else {
      EXPECT_GE(climbing_frames, 1u);  // the frames whose changed subtrees outgrow a work list
    }
  }
}

// A frame that changes nearly every entity (7/8 or more: a scene that animates everything)
// computes them all, as a first frame's passes do, instead of reading and writing two dirty marks
// an entity to skip the few that did not change; below that it skips them. Frozen Statics stay
// frozen either way, and the frame after computes only what it changed.
TEST_F(GpuRandom, AFrameThatChangesNearlyEveryEntityComputesThemAllWithoutMarks) {
  struct Case {
    const char* what;
    PropagatorOptions options;
  };
  const Case cases[] = {
      {"values written in place where dense (this device's default)", {}},
      {"values staged", {.value_writes = ValueWrites::Staged}},
      {"device addresses in pieces", {.max_buffer_bytes = kMinBufferBytes}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EntityStore store;
    ValueSource v(21);
    const uint32_t n = 12000;
    build_breadth_first_forest(store, v, n);
    Propagator gpu = make_propagator(ctx(), c.options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    // Every entity's translation, then 15 of every 16 (above 7/8), then 3 of every 4 (below).
    for (const uint32_t every_sixteen : {16u, 15u, 12u}) {
      for (EntityId e = 0; e < n; ++e)
        if (e % 16 < every_sixteen) store.set_translation(e, v.vec(5));
      const std::string what = std::to_string(every_sixteen) + " of 16 changed";
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      const FrameStats& fs = gpu.last_frame();
      EXPECT_TRUE(fs.full_pass) << what;
      EXPECT_EQ(fs.skip_unchanged, every_sixteen == 12) << what;
      EXPECT_EQ(fs.evaluated_entities, n) << what;
      EXPECT_EQ(fs.dirty_entities, n / 16 * every_sixteen) << what;
      EXPECT_EQ((fs.pass_features & gpu::kFeatureSkip) != 0, every_sixteen == 12) << what;
    }
    // A few changes after it: a work list of their subtrees.
    for (uint32_t k = 0; k < 20; ++k) store.set_translation(v.below(n), v.vec(5));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "a few changed"), 1.0);
    EXPECT_FALSE(gpu.last_frame().full_pass);
  }
}

// WideStores::Shared: the wide passes of a scene packed in level order (a generated forest, whose
// workgroups' 256 entries are consecutive slots) gather their LocalToWorlds in shared memory and
// write them as columns: in the first frame, and in frames that skip the unchanged where most
// entities changed (the even frames below; with few changes such frames store directly). Once
// spawns, despawns and re-parents scatter the slots, workgroups whose slots do not follow each
// other store directly: a new Propagator's first frame over the edited store takes the whole
// order with both kinds. Every frame, by descriptors or by device address (whole and in pieces),
// must match the reference.
TEST_F(GpuRandom, SharedWideStoresMatchTheReferenceWhetherSlotsAreConsecutiveOrNot) {
  struct Case {
    const char* what;
    const char* spec;
    PropagatorOptions options;
  };
  const Case cases[] = {
      {"whole order", "gen:forest:30000:4",
       {.work_list_max = 0, .wide_stores = WideStores::Shared}},
      {"work lists", "gen:forest:30000:4", {.wide_stores = WideStores::Shared}},
      {"device addresses", "gen:forest:30000:4",
       {.prefer_descriptors = false, .wide_stores = WideStores::Shared}},
      // Pieces of 256 slots: a workgroup of consecutive slots straddles two unless it starts at
      // a multiple of 256, as a flat scene's do.
      {"pieces of 256 slots", "gen:flat:30000",
       {.wide_stores = WideStores::Shared, .max_buffer_bytes = kMinBufferBytes}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Result<Scene> scene = generate_scene(c.spec, 3);
    ASSERT_TRUE(scene.ok());
    EntityStore& store = scene->store;
    Propagator gpu = make_propagator(ctx(), c.options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    EXPECT_TRUE(gpu.last_frame().shared_wide_stores);
    EXPECT_FALSE(gpu.last_frame().pass_features & gpu::kFeatureSharedStores);  // rules only
    ValueSource v(8);
    const uint32_t n = 30000;
    EntityId next = n;
    for (int frame = 0; frame < 8; ++frame) {
      // Even frames move every entity, odd ones a few and the hierarchy.
      if (frame % 2 == 0) {
        for (EntityId id = 0; id < n; ++id)
          if (store.contains(id)) store.set_translation(id, v.vec(3));
      } else {
        for (uint32_t k = 0; k < 200; ++k) {
          const EntityId id = v.below(n);
          if (store.contains(id)) store.set_translation(id, v.vec(3));
        }
        for (uint32_t k = 0; k < 40; ++k) {
          const EntityId child = 1 + v.below(n - 1), parent = v.below(n);
          if (store.contains(child) && store.contains(parent)) store.set_parent(child, parent);
        }
        for (uint32_t k = 0; k < 40; ++k) {
          const EntityId id = 1 + v.below(n - 1);
          if (store.contains(id)) store.destroy(id);
        }
        for (uint32_t k = 0; k < 40; ++k, ++next) {
          store.create(next);
          store.set_translation(next, v.vec(2));
          const EntityId parent = v.below(n);
          if (store.contains(parent)) store.set_parent(next, parent);
        }
      }
      const std::string what = "frame " + std::to_string(frame);
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    }
    Propagator fresh = make_propagator(ctx(), c.options);
    CpuReference fresh_cpu;
    EXPECT_LE(frame_and_compare(fresh, fresh_cpu, store, "scattered slots, first frame"), 1.0);
  }
}

// The device-address passes (what scenes beyond one binding per array use), the same with
// texel reads (what lavapipe's scenes past 2 million entities use), and the descriptor passes
// without texel reads (TexelReads::Never), on a random scene with frames and on a deep chain,
// against the reference; the default passes (on lavapipe descriptors with texel reads, every
// other test) must agree too.
TEST_F(GpuRandom, DeviceAddressAndStorageOnlyPassesMatchTheReference) {
  struct Case {
    const char* name;
    PropagatorOptions options;
    bool descriptors;
    bool texel_reads;
  };
  const Case cases[] = {
      {"device addresses", {.prefer_descriptors = false}, false, false},
      {"device addresses with texel reads",
       {.prefer_descriptors = false, .texel_reads = TexelReads::Always}, false, true},
      {"storage descriptors", {.texel_reads = TexelReads::Never}, true, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EntityStore store;
    ValueSource v(11);
    build_random_scene(store, 20000, 64, v);
    store.create(1'000'000);  // and a chain of 5000 below it
    for (EntityId id = 1'000'001; id < 1'005'000; ++id) {
      store.create(id);
      store.set_translation(id, v.vec(1));
      store.set_parent(id, id - 1);
    }
    Propagator gpu = make_propagator(ctx(), c.options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    EXPECT_EQ(gpu.last_frame().descriptors, c.descriptors);
    EXPECT_EQ(gpu.last_frame().texel_reads, c.texel_reads);
    for (uint32_t k = 0; k < 2000; ++k) store.set_translation(v.below(20000), v.vec(5));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "scattered values"), 1.0);
    store.set_parent(1'000'000, 3);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "hierarchy"), 1.0);
  }
  // And TexelReads::Always (the default on a CPU device) reads through texel buffers: so small a
  // scene fits the least view a device may allow (65,536 texels).
  EntityStore store;
  ValueSource v(12);
  build_random_scene(store, 2000, 16, v);
  Propagator gpu = make_propagator(ctx(), {.texel_reads = TexelReads::Always});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "default, first frame"), 1.0);
  EXPECT_TRUE(gpu.last_frame().descriptors);
  EXPECT_TRUE(gpu.last_frame().texel_reads);
}

// A pass of more workgroups than a dispatch may put along x (65,535, first exceeded beyond 16.7
// million entities) gets rows along y that the shaders flatten back. A cap of 3 groups makes
// every pass of this scene such a grid: the widest level's groups become rows of 3, the other
// wide levels and the scatter of a scattered-values frame likewise. An index taken from x alone
// would leave most entities unwritten; a wrong row stride, some entities twice.
TEST_F(GpuRandom, PassesBeyondTheGroupCapRunAsRowsAndMatchTheReference) {
  struct Case {
    const char* name;
    PropagatorOptions options;
  };
  const Case cases[] = {
      // A dispatch per level (the fused pass's rows: FusedLevelsEvaluateAForest...; the climb's:
      // ClimbedTopLevelsEvaluate...).
      {"descriptors",
       {.level_passes = LevelPasses::Separate, .climb_top = ClimbTop::Never,
        .max_groups_per_dimension = 3}},
      {"device addresses",
       {.prefer_descriptors = false, .level_passes = LevelPasses::Separate,
        .climb_top = ClimbTop::Never, .max_groups_per_dimension = 3}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EntityStore store;
    ValueSource v(13);
    build_random_scene(store, 20000, 64, v);
    Propagator gpu = make_propagator(ctx(), c.options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "2D grid, first frame"), 1.0);
    // The widest level: ceil(ceil(width / 256) / 3) rows.
    uint32_t widest = 0;
    for (const LevelOrder::Segment& seg : gpu.order().levels())
      widest = std::max(widest, seg.count);
    EXPECT_EQ(gpu.last_frame().grid_rows, ((widest + 255) / 256 + 2) / 3);
    for (uint32_t k = 0; k < 2000; ++k) store.set_translation(v.below(20000), v.vec(5));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "2D grid, scattered values"), 1.0);
    EXPECT_GT(gpu.last_frame().grid_rows, 1u);
  }
}

// Levels on both sides of the narrow/wide boundary, alternating, so that batched runs of narrow
// levels and per-level wide dispatches hand over to each other in every order.
TEST_F(GpuRandom, NarrowAndWideLevelsAlternate) {
  EntityStore store;
  ValueSource v(7);
  const uint32_t widths[] = {1, gpu::kNarrowLevelMax, gpu::kNarrowLevelMax + 1, 3, 1000, 1, 1,
                             gpu::kNarrowLevelMax, 70000, 2, gpu::kNarrowLevelMax + 1, 1};
  EntityId next = 0;
  std::vector<EntityId> previous;
  for (uint32_t w : widths) {
    std::vector<EntityId> level;
    for (uint32_t k = 0; k < w; ++k) {
      const EntityId e = next++;
      store.create(e);
      add_features(store, e, random_features(v) & ~(kStatic | kOverride), v);
      if (!previous.empty()) store.set_parent(e, previous[v.below(uint32_t(previous.size()))]);
      level.push_back(e);
    }
    previous = std::move(level);
  }
  Propagator gpu = make_propagator(ctx());
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "alternating"), 1.0);
  EXPECT_EQ(gpu.last_frame().levels, std::size(widths));
}

}  // namespace
}  // namespace tprop::test
