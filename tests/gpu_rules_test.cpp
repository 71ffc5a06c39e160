// The GPU path against hand-computed values and against CpuReference over the whole rule table:
// every combination of the transform components on a root, on its child and on its grandchild,
// plus unknown parents, cycles, Statics and overrides over several frames.
#include "gpu_test_support.h"

#include <chrono>

#include "../shaders/scene_layout.h"

namespace tprop::test {
namespace {

class GpuRules : public GpuTest {};

TEST_F(GpuRules, EmptyStoreRunsAndReadsBackNothing) {
  EntityStore store;
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  auto got = gpu.read_back();
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  EXPECT_EQ(gpu.output().range, 0u);
}

TEST_F(GpuRules, TranslationChainAddsUp) {
  EntityStore store;
  for (EntityId id = 1; id <= 3; ++id) {
    store.create(id);
    store.set_translation(id, float3(float(id), 0.0f, 0.5f));
    if (id > 1) store.set_parent(id, id - 1);
  }
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  // 1 + 2 + 3 along x, 3 * 0.5 along z: exact in float.
  const float4x4 w = world_of(gpu, store, 3);
  EXPECT_EQ(w[3], float4(6.0f, 0.0f, 1.5f, 1.0f));
  EXPECT_EQ(w[0], float4(1, 0, 0, 0));
}

// Entity 1 at T(parent_at) S(parent_scale); entity 2, its child, at T(1,0,0) with
// ParentScaleInverse. Returns entity 2's LocalToWorld from the GPU.
float4x4 world_of_psi_child(VulkanContext& ctx, float3 parent_at, float parent_scale) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, parent_at);
  store.set_scale(1, parent_scale);
  store.create(2);
  store.set_parent(2, 1);
  store.set_translation(2, float3(1, 0, 0));
  store.add(2, Component::ParentScaleInverse);
  Propagator gpu = make_propagator(ctx);
  EXPECT_TRUE(gpu.run(store).ok());
  return world_of(gpu, store, 2);
}

TEST_F(GpuRules, ParentScaleInverseCancelsTheParentsScale) {
  // T(1,2,3) S(2) * T(1,0,0) S(1/2) = T(1 + 2, 2, 3), no scale left.
  const float4x4 w = world_of_psi_child(ctx(), float3(1, 2, 3), 2.0f);
  EXPECT_EQ(w[3], float4(3, 2, 3, 1));
  EXPECT_EQ(w[0], float4(1, 0, 0, 0));
  EXPECT_EQ(w[1], float4(0, 1, 0, 0));
  EXPECT_EQ(w[2], float4(0, 0, 1, 0));
}

// README (Semantics): the zero Scale inverts to 0, so the child collapses onto its parent's
// origin, finite: T(5,0,0) S(0) * T(1,0,0) S(0) has no linear part and its origin at (5,0,0).
TEST_F(GpuRules, ParentScaleInverseUnderAZeroScaleCollapsesTheChildFinite) {
  const float4x4 w = world_of_psi_child(ctx(), float3(5, 0, 0), 0.0f);
  EXPECT_EQ(w[3], float4(5, 0, 0, 1));
  for (int c = 0; c < 3; ++c) EXPECT_EQ(w[c], float4(0, 0, 0, 0)) << "column " << c;
}

TEST_F(GpuRules, OverrideTakesTheUserMatrixAndChildrenFollowIt) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, float3(100, 0, 0));  // ignored: overridden
  store.set_matrix(1, MatrixComponent::LocalToWorld, translation_matrix(float3(0, 7, 0)));
  store.add(1, Component::WriteGroupOverride);
  store.create(2);
  store.set_parent(2, 1);
  store.set_translation(2, float3(0, 0, 1));
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  EXPECT_EQ(world_of(gpu, store, 1)[3], float4(0, 7, 0, 1));
  EXPECT_EQ(world_of(gpu, store, 2)[3], float4(0, 7, 1, 1));
}

TEST_F(GpuRules, StaticFreezesAfterItsFirstFrameWhileChildrenStillMove) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, float3(1, 0, 0));
  store.add(1, Component::Static);
  store.create(2);
  store.set_parent(2, 1);
  store.set_translation(2, float3(0, 1, 0));
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  EXPECT_EQ(world_of(gpu, store, 2)[3], float4(1, 1, 0, 1));

  store.set_translation(1, float3(50, 0, 0));  // frozen: no effect
  store.set_translation(2, float3(0, 2, 0));
  ASSERT_TRUE(gpu.run(store).ok());
  EXPECT_EQ(world_of(gpu, store, 1)[3], float4(1, 0, 0, 1));
  EXPECT_EQ(world_of(gpu, store, 2)[3], float4(1, 2, 0, 1));

  // A re-sort moves positions; the frozen value is kept by static index, not by position.
  store.create(0);
  store.set_parent(1, 0);
  store.set_translation(0, float3(0, 0, 9));
  ASSERT_TRUE(gpu.run(store).ok());
  EXPECT_TRUE(gpu.last_frame().hierarchy_changed);
  EXPECT_EQ(world_of(gpu, store, 1)[3], float4(1, 0, 0, 1));
  EXPECT_EQ(world_of(gpu, store, 2)[3], float4(1, 2, 0, 1));

  // Removing and adding Static again computes it once more.
  store.remove(1, Component::Static);
  store.add(1, Component::Static);
  ASSERT_TRUE(gpu.run(store).ok());
  EXPECT_EQ(world_of(gpu, store, 1)[3], float4(50, 0, 9, 1));
}

// Every combination of kFeatureBits features on a root; its child and grandchild carry other
// combinations, so each rule also meets every kind of parent (ParentScaleInverse from a
// CompositeScale, a Scale, a NonUniformScale or nothing).
void build_rule_table(EntityStore& store, ValueSource& v) {
  const uint32_t combos = 1u << kFeatureBits;
  for (uint32_t c = 0; c < combos; ++c) {
    const EntityId root = c * 3, child = root + 1, grandchild = root + 2;
    store.create(root);
    store.create(child);
    store.create(grandchild);
    add_features(store, root, c, v);
    add_features(store, child, (c * 7919u + 13u) & (combos - 1), v);
    add_features(store, grandchild, (c * 104729u + 5u) & (combos - 1), v);
    store.set_parent(child, root);
    store.set_parent(grandchild, child);
  }
  // An unknown parent and a cycle: roots, evaluated as if they had no Parent.
  const EntityId base = combos * 3;
  store.create(base);
  add_features(store, base, kTranslation | kParentScaleInverse | kLocalToWorld, v);
  store.set_parent(base, 999'999'999);
  store.create(base + 1);
  store.create(base + 2);
  add_features(store, base + 1, kTranslation | kScale | kParentScaleInverse, v);
  add_features(store, base + 2, kLocalToParent | kLocalToWorld, v);
  store.set_parent(base + 1, base + 2);
  store.set_parent(base + 2, base + 1);
  store.create(base + 3);  // hangs below the cycle: keeps its parent
  add_features(store, base + 3, kTranslation | kParentScaleInverse, v);
  store.set_parent(base + 3, base + 1);

  // Parents whose scale has no inverse (README, Semantics: such a factor inverts to 0): a zero
  // Scale, a zero NonUniformScale factor, a CompositeScale built on a zero Scale about a pivot
  // and a singular user-written CompositeScale, each with children of several mixes carrying
  // ParentScaleInverse and a grandchild.
  const uint32_t child_mixes[] = {
      kTranslation | kParentScaleInverse,
      kTranslation | kRotation | kScale | kParentScaleInverse,
      kEuler | kParentScaleInverse,
      kTranslation | kCompositeRotation | kRotationPivots | kCompositeScale | kScalePivots |
          kNonUniformScale | kParentScaleInverse,
  };
  EntityId next = base + 4;
  for (int kind = 0; kind < 4; ++kind) {
    const EntityId parent = next++;
    store.create(parent);
    add_features(store, parent, kTranslation | kRotation, v);
    if (kind == 0) store.set_scale(parent, 0.0f);
    if (kind == 1) store.set_non_uniform_scale(parent, float3(1, 0, 1));
    if (kind == 2) {
      store.set_scale(parent, 0.0f);
      store.set_pivot(parent, PivotComponent::ScalePivot, v.vec(2));
      store.add(parent, Component::CompositeScale);
    }
    if (kind == 3) {
      store.set_matrix(parent, MatrixComponent::CompositeScale,
                       translation_matrix(v.vec(2)) * scale_matrix(float3(2, 0, 1)));
    }
    for (const uint32_t mix : child_mixes) {
      store.create(next);
      add_features(store, next, mix, v);
      store.set_parent(next++, parent);
    }
    store.create(next);
    add_features(store, next, kTranslation | kScale | kParentScaleInverse, v);
    store.set_parent(next, next - 1);
    ++next;
  }
}

// Every way the passes reach the arrays and every way a frame is evaluated: descriptors (the
// default for scenes that fit one binding per array), buffer device addresses only (how larger
// scenes run), the whole order skipping the unchanged on the GPU, and a work list of the changed
// subtrees whatever their size.
struct AddressingCase {
  const char* name;
  PropagatorOptions options;
};
class GpuRulesBothPaths : public GpuTest, public ::testing::WithParamInterface<AddressingCase> {};

TEST_P(GpuRulesBothPaths, EveryComponentCombinationMatchesTheReferenceOverFrames) {
  EntityStore store;
  ValueSource v(42);
  build_rule_table(store, v);
  Propagator gpu = make_propagator(ctx(), GetParam().options);
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "frame 1"), 1.0);
  if (GetParam().options.climb_top == ClimbTop::Always) {
    EXPECT_GE(gpu.last_frame().climbed_levels, 3u);
  }
  if (const uint64_t cap = GetParam().options.max_buffer_bytes) {
    // 98,000 slots: 383 pieces per per-slot array, hundreds more for the other arrays.
    EXPECT_EQ(gpu.last_frame().slot_pieces, (store.slot_capacity() + 255) / 256);
    EXPECT_GT(gpu.last_frame().device_buffers, 9u * gpu.last_frame().slot_pieces);
    EXPECT_LE(gpu.last_frame().largest_buffer_bytes, cap);
  }

  // Value-only frame: new values (Statics must not move), components added and removed.
  for (EntityId id = 0; id < (1u << kFeatureBits) * 3; id += 5) {
    store.set_translation(id, v.vec(5));
    if (id % 3 == 0) store.set_non_uniform_scale(id, v.scale3());
    if (id % 7 == 0) store.remove(id, Component::Scale);
    if (id % 11 == 0) store.add(id, Component::CompositeScale);
  }
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "frame 2 (values)"), 1.0);
  EXPECT_FALSE(gpu.last_frame().hierarchy_changed);

  // Hierarchy frame: grandchildren move to other roots, some children are detached, a parent
  // is destroyed, the cycle is broken.
  for (EntityId c = 0; c < (1u << kFeatureBits); c += 3) store.set_parent(c * 3 + 2, (c * 3 + 9) % 300);
  for (EntityId c = 1; c < (1u << kFeatureBits); c += 17) store.remove(c * 3 + 1, Component::Parent);
  store.destroy(3 * 5);
  store.remove((1u << kFeatureBits) * 3 + 2, Component::Parent);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "frame 3 (hierarchy)"), 1.0);
  EXPECT_TRUE(gpu.last_frame().hierarchy_changed);
  EXPECT_FALSE(gpu.last_frame().full_upload);

  EXPECT_LE(frame_and_compare(gpu, cpu, store, "frame 4 (nothing changed)"), 1.0);
  const PropagatorOptions& o = GetParam().options;
  // Descriptors only where every array is one piece.
  EXPECT_EQ(gpu.last_frame().descriptors, o.prefer_descriptors && !o.max_buffer_bytes);
  // Texel reads where asked for, beside either addressing, where their arrays are one piece.
  if (o.texel_reads == TexelReads::Always) {
    EXPECT_EQ(gpu.last_frame().texel_reads, !o.max_buffer_bytes);
  }
  // Nothing changed: nothing to upload, nothing to evaluate, whatever the strategy.
  EXPECT_EQ(gpu.last_frame().upload_bytes, 0u);
  EXPECT_EQ(gpu.last_frame().evaluated_entities, 0u);
  EXPECT_EQ(gpu.last_frame().dispatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Addressing, GpuRulesBothPaths,
    ::testing::Values(AddressingCase{"Descriptors", {}},
                      AddressingCase{"DeviceAddresses", {.prefer_descriptors = false}},
                      AddressingCase{"DeviceAddressesWithTexelReads",
                                     {.prefer_descriptors = false,
                                      .texel_reads = TexelReads::Always}},
                      AddressingCase{"WholeOrderSkippingTheUnchanged", {.work_list_max = 0}},
                      AddressingCase{"WorkListWheneverPossible", {.work_list_max = UINT32_MAX}},
                      AddressingCase{"GeneralShaders", {.specialize = false}},
                      AddressingCase{"ValuesInPlace", {.value_writes = ValueWrites::InPlace}},
                      // The three levels in one climb step (past the default limit: 32,000
                      // entities a level), every frame, skipping the unchanged or not.
                      AddressingCase{"ClimbedLevels",
                                     {.climb_top = ClimbTop::Always,
                                      .climb_level_work = 1u << 20}},
                      AddressingCase{"ClimbedLevelsSkippingTheUnchanged",
                                     {.work_list_max = 0,
                                      .climb_top = ClimbTop::Always,
                                      .climb_level_work = 1u << 20}},
                      // 16 KiB buffers: the per-slot arrays in pieces of 256 slots, the rare
                      // table of 32 records, the frozen one of 256, the order of 4,096 entries,
                      // the frame's deltas of 256 of either kind.
                      AddressingCase{"EveryArrayInSmallPieces",
                                     {.max_buffer_bytes = kMinBufferBytes}}),
    [](const ::testing::TestParamInfo<AddressingCase>& param) { return param.param.name; });

TEST_F(GpuRules, AnUpdateThatWasNeverRecordedIsNotLost) {
  EntityStore store;
  for (EntityId id = 0; id < 100; ++id) {
    store.create(id);
    store.set_translation(id, float3(1, 0, 0));
    if (id > 0) store.set_parent(id, id - 1);
  }
  store.add(50, Component::Static);
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  store.set_translation(10, float3(1, 1, 0));
  store.add(60, Component::Static);
  ASSERT_TRUE(gpu.update(store).ok());  // staged, never recorded
  store.set_translation(20, float3(1, 0, 1));
  ASSERT_TRUE(gpu.run(store).ok());
  // Entity 99 is 100 units along x, moved by entity 10 (y) and entity 20 (z); Static 50 kept
  // its first value (x 51), Static 60 was first computed in this run.
  EXPECT_EQ(world_of(gpu, store, 50)[3], float4(51, 0, 0, 1));
  EXPECT_EQ(world_of(gpu, store, 60)[3], float4(51 + 10, 0, 0, 1));
  EXPECT_EQ(world_of(gpu, store, 99)[3], float4(51 + 49, 0, 0, 1));
  EXPECT_EQ(world_of(gpu, store, 40)[3], float4(41, 1, 1, 1));
}

TEST_F(GpuRules, AnotherStoreIsPackedAnew) {
  EntityStore a, b;
  a.create(1);
  a.set_translation(1, float3(1, 0, 0));
  b.create(7);
  b.create(8);
  b.set_parent(8, 7);
  b.set_translation(8, float3(0, 3, 0));
  b.take_changes();  // b reports no change at all: only its being another store says repack
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(a).ok());
  ASSERT_TRUE(gpu.run(b).ok());  // b's changes say nothing about a's packing
  EXPECT_TRUE(gpu.last_frame().full_upload);
  EXPECT_EQ(world_of(gpu, b, 8)[3], float4(0, 3, 0, 1));
}

// An application that loads a new level into the same store object (`store = EntityStore{}`, or
// a store made where a destroyed one lived) hands update() another store at the same address:
// nothing of the old scene may survive into it. The old scene is larger, deeper and has Statics
// frozen at slots the new one reuses; the new one's results must be the reference's, its empty
// slots zeros, and the frame a full upload. A store moved to another address is the same one.
TEST_F(GpuRules, AStoreGivenANewSceneIsPackedAnewAndAMovedOneIsNot) {
  EntityStore store = unit_step_chain(400);
  for (EntityId id = 0; id < 400; id += 7) store.add(id, Component::Static);
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(store).ok());
  ASSERT_TRUE(gpu.run(store).ok());  // the Statics baked and frozen
  store = EntityStore{};
  for (EntityId id = 0; id < 100; ++id) {
    store.create(id);
    store.set_translation(id, float3(0, 2, 0));
    if (id % 7 == 0) store.add(id, Component::Static);
  }
  for (EntityId id = 50; id < 100; id += 2) store.destroy(id);
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "the new scene"), 1.0);
  EXPECT_TRUE(gpu.last_frame().full_upload);
  EXPECT_EQ(gpu.last_frame().entities, 75u);
  auto back = gpu.read_back();
  ASSERT_TRUE(back.ok());
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot) {
    if (store.alive_at(slot)) continue;
    EXPECT_EQ((*back)[slot], float4x4(0.0f)) << "empty slot " << slot;
  }
  // And frames after it go on from the new scene.
  store.set_translation(10, float3(0, 3, 0));
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "a frame after"), 1.0);
  EXPECT_FALSE(gpu.last_frame().full_upload);
  // A store moved elsewhere (a container that grew) is the same scene: its changes go on as
  // deltas. What the move left behind, filled again, is another store.
  EntityStore moved = std::move(store);
  moved.set_translation(12, float3(0, 4, 0));
  ASSERT_LE(frame_and_compare(gpu, cpu, moved, "the store moved"), 1.0);
  EXPECT_FALSE(gpu.last_frame().full_upload);
  store = EntityStore{};
  store.create(3);
  store.set_translation(3, float3(5, 0, 0));
  CpuReference cpu_again;
  ASSERT_LE(frame_and_compare(gpu, cpu_again, store, "the moved-from store refilled"), 1.0);
  EXPECT_TRUE(gpu.last_frame().full_upload);
  EXPECT_EQ(gpu.last_frame().entities, 1u);
}

// The frozen table is by slot: a store packed after another must not read the other's frozen
// Statics at its own Statics' slots. A baked Static this Propagator never computed for this
// store is computed once more from the store (as CpuReference does for a backend that never
// computed it), then frozen.
TEST_F(GpuRules, AnotherStoresStaticsAreNotReadFrozenFromTheFirst) {
  EntityStore a, b;
  a.create(1);
  a.set_translation(1, float3(1, 0, 0));
  a.add(1, Component::Static);
  b.create(2);
  b.set_translation(2, float3(5, 0, 0));
  b.add(2, Component::Static);
  ASSERT_EQ(a.slot_of(1), b.slot_of(2));
  Propagator gpu = make_propagator(ctx());
  ASSERT_TRUE(gpu.run(a).ok());
  ASSERT_TRUE(gpu.run(b).ok());
  EXPECT_EQ(world_of(gpu, b, 2)[3], float4(5, 0, 0, 1));
  a.set_translation(1, float3(2, 0, 0));  // baked in a: no backend that computed it moves it
  ASSERT_TRUE(gpu.run(a).ok());
  EXPECT_TRUE(gpu.last_frame().full_upload);
  EXPECT_EQ(world_of(gpu, a, 1)[3], float4(2, 0, 0, 1)) << "computed anew, not b's 5";
  a.set_translation(1, float3(3, 0, 0));  // frozen now
  ASSERT_TRUE(gpu.run(a).ok());
  EXPECT_EQ(world_of(gpu, a, 1)[3], float4(2, 0, 0, 1));
}

TEST_F(GpuRules, OutputBindingDescribesTheLocalToWorldBuffer) {
  EntityStore store;
  for (EntityId id = 0; id < 10; ++id) store.create(id);
  Propagator gpu = make_propagator(ctx());
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(gpu.run(store).ok());
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const OutputBinding out = gpu.output();
  EXPECT_NE(out.buffer, VK_NULL_HANDLE);
  EXPECT_EQ(out.offset, 0u);
  EXPECT_EQ(out.stride, 64u);
  EXPECT_EQ(out.range, 10u * 64u);
  EXPECT_NE(out.address, 0u);
  EXPECT_EQ(out.written_stage, VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT);
  EXPECT_EQ(out.written_access, VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT);
  // Validation implies VK_EXT_debug_utils, so buffers, pipelines and passes carry names (a
  // wrong name or label call would be a validation error, which the fixture fails on).
  EXPECT_TRUE(ctx().debug_utils());
  auto times = gpu.stage_times();
  ASSERT_TRUE(times.ok()) << times.error().message;
  EXPECT_GE(times->upload_ms, 0.0);
  EXPECT_GT(times->total_ms(), 0.0);
  // The GPU stages run inside the submit-and-wait of run(): a wrong timestamp period or bit
  // mask would show as more GPU time than wall time.
  EXPECT_LE(times->total_ms(), wall_ms);
}


// A LocalToWorld past one buffer: the output lists its pieces, each its own buffer, in slot
// order, and the first piece's fields are where the single-buffer fields point.
TEST_F(GpuRules, OutputBindingListsThePiecesOfALocalToWorldPastOneBuffer) {
  EntityStore store;
  for (EntityId id = 0; id < 1000; ++id) {
    store.create(id);
    store.set_translation(id, float3(float(id), 0, 0));
  }
  Propagator gpu = make_propagator(ctx(), {.max_buffer_bytes = kMinBufferBytes});
  ASSERT_TRUE(gpu.run(store).ok());
  const OutputBinding out = gpu.output();
  ASSERT_EQ(out.slots_per_piece, 256u);
  ASSERT_EQ(out.pieces.size(), 4u);  // 256 + 256 + 256 + 232 slots
  for (uint32_t p = 0; p < 4; ++p) {
    EXPECT_EQ(out.pieces[p].first_slot, p * 256u);
    EXPECT_EQ(out.pieces[p].slots, p < 3 ? 256u : 232u);
    EXPECT_EQ(out.pieces[p].range, out.pieces[p].slots * 64u);
    EXPECT_EQ(out.pieces[p].offset, 0u);
    EXPECT_NE(out.pieces[p].buffer, VK_NULL_HANDLE);
    EXPECT_NE(out.pieces[p].address, 0u);
    if (p) {
      EXPECT_NE(out.pieces[p].buffer, out.pieces[p - 1].buffer);
    }
  }
  EXPECT_EQ(out.buffer, out.pieces[0].buffer);
  EXPECT_EQ(out.address, out.pieces[0].address);
  EXPECT_EQ(out.range, 256u * 64u);
  EXPECT_FALSE(gpu.last_frame().descriptors);
  // Read back across the pieces, slot by slot.
  auto all = gpu.read_back();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1000u);
  for (EntityId id : {0u, 255u, 256u, 511u, 767u, 768u, 999u})
    EXPECT_EQ((*all)[store.slot_of(id)][3], float4(float(id), 0, 0, 1)) << "entity " << id;

  // One buffer: one piece, the same as the single-buffer fields.
  Propagator single = make_propagator(ctx());
  ASSERT_TRUE(single.run(store).ok());
  const OutputBinding one = single.output();
  ASSERT_EQ(one.pieces.size(), 1u);
  EXPECT_EQ(one.pieces[0].buffer, one.buffer);
  EXPECT_EQ(one.pieces[0].range, one.range);
  EXPECT_EQ(one.range, 1000u * 64u);
  EXPECT_GE(one.slots_per_piece, 1000u);
}

// A scene growing past its pieces: the full pieces stay where they are, the shorter last one is
// replaced and copied over on the GPU, new pieces are added, and nothing is uploaded again but
// the new entities. Chains cross every piece boundary (each entity's parent is the one before),
// and the old entities' values, never sent again, must come through.
TEST_F(GpuRules, GrowthPastAPieceKeepsWhatTheGpuHoldsAndUploadsOnlyTheNewEntities) {
  EntityStore store;
  EntityId next = 0;
  auto spawn = [&](uint32_t count) {  // returns how many of them are Static
    uint32_t statics = 0;
    for (uint32_t k = 0; k < count; ++k, ++next) {
      store.create(next);
      store.set_translation(next, float3(1, float(next % 7), 0));
      store.set_rotation(next, make_quat(0, 0.0998f, 0, 0.995f));
      if (next % 100 != 0) store.set_parent(next, next - 1);  // chains of 100
      if (next % 50 == 7) statics += store.add(next, Component::Static);
    }
    return statics;
  };
  uint32_t new_statics = spawn(100);  // one piece of 112 slots
  Propagator gpu = make_propagator(ctx(), {.max_buffer_bytes = kMinBufferBytes});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  EXPECT_EQ(gpu.last_frame().slot_pieces, 1u);
  EXPECT_TRUE(gpu.last_frame().full_upload);
  uint32_t pieces = 1;
  for (uint32_t frame = 0; frame < 8; ++frame) {
    const uint32_t baked = new_statics;  // computed last frame, read from the frozen table now
    new_statics = spawn(150);  // the last piece grows, then is full and new ones follow
    const std::string what = "growth " + std::to_string(frame);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    const FrameStats& fs = gpu.last_frame();
    EXPECT_FALSE(fs.full_upload) << what;
    EXPECT_EQ(fs.staged_entities, 150u + baked) << what;  // the new entities, nothing else
    EXPECT_GE(fs.slot_pieces, pieces) << what;
    pieces = fs.slot_pieces;
    EXPECT_EQ(fs.slot_pieces, (store.slot_capacity() + 255) / 256) << what;
  }
  EXPECT_EQ(pieces, (100u + 8 * 150u + 255) / 256);
  // Values changed across every piece, then quiet.
  for (EntityId id = 3; id < next; id += 97) store.set_translation(id, float3(0, 1, 2));
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "values"), 1.0);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "quiet"), 1.0);
  EXPECT_EQ(gpu.last_frame().upload_bytes, 0u);
}

// Statics frozen in their first frame keep their values while the frozen table grows past its
// pieces (256 values each), the replaced piece copied over on the GPU.
TEST_F(GpuRules, FrozenValuesSurviveTheirTableGrowingAcrossPieces) {
  EntityStore store;
  for (EntityId id = 0; id < 1200; ++id) {
    store.create(id);
    store.set_translation(id, float3(float(id), 0, 0));
  }
  Propagator gpu = make_propagator(ctx(), {.max_buffer_bytes = kMinBufferBytes});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  // 100 more Statics a frame; every Static moves every frame, and must not.
  for (uint32_t frame = 1; frame <= 10; ++frame) {
    for (EntityId id = (frame - 1) * 100; id < frame * 100; ++id) store.add(id, Component::Static);
    for (EntityId id = 0; id < frame * 100; ++id)
      store.set_translation(id, float3(float(id), float(frame), 0));
    const std::string what = "frame " + std::to_string(frame);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
  }
  auto all = gpu.read_back();
  ASSERT_TRUE(all.ok());
  for (EntityId id : {0u, 99u, 255u, 256u, 511u, 512u, 999u}) {
    const float first_frame = float(id / 100 + 1);  // made Static in frame id / 100 + 1
    EXPECT_EQ((*all)[store.slot_of(id)][3], float4(float(id), first_frame, 0, 1)) << id;
  }
  EXPECT_LE(gpu.last_frame().largest_buffer_bytes, kMinBufferBytes);
}

}  // namespace
}  // namespace tprop::test
