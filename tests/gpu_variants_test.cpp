// The evaluate passes are specialized to the rules a scene's entities use (shaders/
// pass_features.h), chains are walked by one subgroup and bundles of parallel chains by an
// invocation per chain (PropagatorOptions::subgroup_chains):
// each variant must be the one a scene selects, must still match the CPU reference, and must be
// left as soon as an entity needs a rule it lacks.
#include "gpu_test_support.h"

#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "../shaders/pass_features.h"

namespace tprop::test {
namespace {

class GpuVariants : public GpuTest {};

using namespace gpu;  // kFeature*

// The rule bits of pass_features.h, without those that say what a dispatch holds.
constexpr uint32_t kRuleBits =
    kFeatureComposite | kFeatureUser | kFeatureStatic | kFeatureProjective;

// Four wide levels (more than kNarrowLevelMax entities each) of plain T * R * S entities: every
// level is a dispatch of its own, level 0 of roots only.
void build_plain_forest(EntityStore& store, ValueSource& v) {
  EntityId next = 0;
  std::vector<EntityId> previous;
  for (uint32_t width : {100u, 300u, 900u, 900u}) {
    std::vector<EntityId> level;
    for (uint32_t k = 0; k < width; ++k) {
      const EntityId e = next++;
      store.create(e);
      add_features(store, e, kTranslation | kRotation | kScale, v);
      if (!previous.empty()) store.set_parent(e, previous[k % previous.size()]);
      level.push_back(e);
    }
    previous = std::move(level);
  }
}

// Entities of the plain forest at level 1 and 3 (ids 100.. and 1300..).
constexpr EntityId kLevel1 = 100, kLevel3 = 1300;

TEST_F(GpuVariants, APlainSceneRunsWithoutAnyRulePath) {
  EntityStore store;
  ValueSource v(1);
  build_plain_forest(store, v);
  // A dispatch per level: a fused or climb step that holds the roots and the levels below tests
  // which entities keep their own matrix (kFeatureFinalTest), as any step holding both does.
  Propagator gpu = make_propagator(
      ctx(), {.level_passes = LevelPasses::Separate, .climb_top = ClimbTop::Never});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "plain"), 1.0);
  // Roots alone (level 0) and attached entities that all multiply: no flag is even read.
  EXPECT_EQ(gpu.last_frame().pass_features, kFeatureParents);
  for (EntityId e = 0; e < 2200; e += 7) store.set_translation(e, v.vec(5));
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "plain, scattered values"), 1.0);
  EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, 0u);
}

TEST_F(GpuVariants, EachRuleAnEntityNeedsSelectsTheVariantWithIt) {
  struct Case {
    const char* name;
    std::function<void(EntityStore&, ValueSource&)> add;
    uint32_t expected;  // of kRuleBits | kFeatureFinalTest
  };
  const Case cases[] = {
      {"composite rotation with pivots",
       [](EntityStore& s, ValueSource& v) {
         add_features(s, kLevel3 + 5, kCompositeRotation | kRotationPivots | kPostRotation, v);
       },
       kFeatureComposite},
      {"parent scale inverse",
       [](EntityStore& s, ValueSource& v) { add_features(s, kLevel3 + 9, kParentScaleInverse, v); },
       kFeatureComposite},
      {"user local to parent on an entity without components",
       [](EntityStore& s, ValueSource& v) {
         const EntityId e = 5000;
         s.create(e);
         s.set_parent(e, kLevel1 + 3);
         s.set_matrix(e, MatrixComponent::LocalToParent, v.affine());
       },
       kFeatureUser},
      {"an entity with nothing but a parent (identity, no rule needed)",
       [](EntityStore& s, ValueSource&) {
         s.create(5000);
         s.set_parent(5000, kLevel1 + 3);
       },
       0},
      {"override below a parent",
       [](EntityStore& s, ValueSource& v) { add_features(s, kLevel3 + 2, kOverride, v); },
       kFeatureUser | kFeatureFinalTest},
      {"override with a user LocalToWorld at a root",
       [](EntityStore& s, ValueSource& v) { add_features(s, 7, kOverride | kLocalToWorld, v); },
       kFeatureUser},
      {"static",
       [](EntityStore& s, ValueSource& v) { add_features(s, kLevel1 + 8, kStatic, v); },
       kFeatureStatic | kFeatureFinalTest},
      {"non-affine user matrix",
       [](EntityStore& s, ValueSource& v) {
         // Without a Rotation the user-written CompositeRotation is kept (NOTES.md).
         s.remove(kLevel1 + 4, Component::Rotation);
         s.set_matrix(kLevel1 + 4, MatrixComponent::CompositeRotation, v.projective());
       },
       kFeatureComposite | kFeatureProjective},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EntityStore store;
    ValueSource v(2);
    build_plain_forest(store, v);
    c.add(store, v);
    Propagator gpu = make_propagator(ctx(), {.work_list_max = 0,
                                            .level_passes = LevelPasses::Separate,
                                            .climb_top = ClimbTop::Never});
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    uint32_t got = gpu.last_frame().pass_features & (kRuleBits | kFeatureFinalTest);
    // A Static's first frame stores it (Static) and from the next it is read frozen and final.
    if (c.expected & kFeatureStatic) got |= kFeatureFinalTest;
    EXPECT_EQ(got, c.expected);
    for (EntityId e = 0; e < 2200; e += 5) store.set_translation(e, v.vec(5));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "values, the whole order"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & (kRuleBits | kFeatureFinalTest), c.expected);
    EXPECT_TRUE(gpu.last_frame().pass_features & kFeatureSkip);
  }
}

// A scene gains a rule mid-run (a rare component, a Static, an override, a non-affine matrix),
// on an entity that a work-list frame evaluates, then loses it: each frame runs the variant
// its entities need, and matches the reference (also with every array in 16 KiB pieces).
TEST_F(GpuVariants, AFrameWhoseSceneGainsARuleSwitchesVariant) {
  for (PropagatorOptions options :
       {PropagatorOptions{}, PropagatorOptions{.work_list_max = 0},
        PropagatorOptions{.prefer_descriptors = false},
        PropagatorOptions{.max_buffer_bytes = kMinBufferBytes}}) {
    EntityStore store;
    ValueSource v(3);
    build_plain_forest(store, v);
    Propagator gpu = make_propagator(ctx(), options);
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "plain"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, 0u);

    const EntityId e = kLevel1 + 11;  // with children at levels 2 and 3
    store.set_matrix(e, MatrixComponent::CompositeScale, v.affine());
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "gains a composite scale"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, kFeatureComposite);
    store.set_translation(kLevel3 + 1, v.vec(5));  // elsewhere: the scene still holds it
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "a value elsewhere"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, kFeatureComposite);
    store.remove(e, Component::CompositeScale);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "loses it"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, 0u);

    store.set_matrix(e, MatrixComponent::ParentScaleInverse, v.projective());
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "gains a non-affine PSI"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, kFeatureComposite | kFeatureProjective);
    store.remove(e, Component::ParentScaleInverse);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "loses it"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, 0u);

    store.add(e, Component::WriteGroupOverride);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "gains an override"), 1.0);
    EXPECT_TRUE(gpu.last_frame().pass_features & kFeatureUser);
    EXPECT_TRUE(gpu.last_frame().pass_features & kFeatureFinalTest);
    store.remove(e, Component::WriteGroupOverride);
    store.add(kLevel3 + 4, Component::Static);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "loses it, a Static appears"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, kFeatureStatic);
    store.set_translation(kLevel3 + 4, v.vec(5));  // frozen: must not move
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "the Static is read frozen"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, kFeatureStatic);
    store.destroy(kLevel3 + 4);
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "the Static is gone"), 1.0);
    EXPECT_EQ(gpu.last_frame().pass_features & kRuleBits, 0u);
  }
}

// A Static frozen under a non-affine parent keeps a non-affine LocalToWorld after the parent's
// matrix is gone: its children must still be read with their fourth row.
TEST_F(GpuVariants, AStaticFrozenUnderANonAffineMatrixKeepsItsFourthRow) {
  EntityStore store;
  ValueSource v(4);
  build_plain_forest(store, v);
  const EntityId parent = kLevel1 + 2, frozen = 400 + 2;  // 402 is at level 2, below 102
  ASSERT_EQ(store.parent(frozen), std::optional<EntityId>(parent));
  store.remove(parent, Component::Rotation);  // so that the user-written matrix is kept
  store.set_matrix(parent, MatrixComponent::CompositeRotation, v.projective());
  store.add(frozen, Component::Static);
  Propagator gpu = make_propagator(ctx());
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "frozen under a non-affine parent"), 1.0);
  store.remove(parent, Component::CompositeRotation);
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "the parent is affine again"), 1.0);
  EXPECT_TRUE(gpu.last_frame().pass_features & kFeatureProjective);
  for (EntityId e = kLevel3; e < kLevel3 + 900; e += 3) store.set_translation(e, v.vec(5));
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "its children move"), 1.0);
}

// The general shader (every rule compiled in) and the specialized ones agree with the reference
// on the same frames of every component mix.
TEST_F(GpuVariants, GeneralAndSpecializedShadersMatchTheReference) {
  for (bool specialize : {false, true}) {
    SCOPED_TRACE(specialize ? "specialized" : "general");
    EntityStore store;
    ValueSource v(5);
    build_random_scene(store, 20000, 64, v);
    for (EntityId e = 0; e < 20000; e += 97) store.set_matrix(e, MatrixComponent::LocalToParent, v.projective());
    Propagator gpu = make_propagator(ctx(), {.specialize = specialize});
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    if (!specialize) {
      EXPECT_EQ(gpu.last_frame().pass_features, kFeatureAll);
    }
    for (uint32_t k = 0; k < 2000; ++k) store.set_translation(v.below(20000), v.vec(5));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "values"), 1.0);
    for (uint32_t k = 0; k < 50; ++k) store.set_parent(v.below(20000), v.below(20000));
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "hierarchy"), 1.0);
  }
}

// A chain whose links carry every component mix (composites, pivots, user matrices, overrides,
// Statics, ParentScaleInverse, non-affine matrices), walked by the chain pass and by the single
// invocation, over frames of values anywhere along it (work lists and whole-order frames that
// start each chain at its first change), Statics and re-parenting.
TEST_F(GpuVariants, ChainsOfEveryComponentMixMatchTheReferenceOverFrames) {
  for (bool chains : {true, false}) {
    for (uint32_t work_list_max : {4096u, 0u}) {
      SCOPED_TRACE(std::string(chains ? "subgroup chains" : "single invocation") +
                   (work_list_max ? ", work lists" : ", whole order"));
      EntityStore store;
      ValueSource v(6);
      const uint32_t n = 1500;
      for (EntityId e = 0; e < n; ++e) {
        store.create(e);
        add_features(store, e, random_features(v), v);
        if (e % 211 == 17) store.set_matrix(e, MatrixComponent::LocalToParent, v.projective());
        if (e > 0) store.set_parent(e, e - 1);
      }
      Propagator gpu = make_propagator(ctx(), {.work_list_max = work_list_max,
                                               .narrow_walk = NarrowWalk::SingleInvocation,
                                               .subgroup_chains = chains});
      CpuReference cpu;
      EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
      EXPECT_EQ(gpu.last_frame().chain_steps > 0, chains);
      for (int frame = 0; frame < 8; ++frame) {
        // Near the end (a short dirty tail), the middle, and once near the top.
        const EntityId at[] = {n - 1 - v.below(10), v.below(n), frame == 5 ? 2u : n - 40};
        for (EntityId e : at) store.set_translation(e, v.vec(5));
        if (frame == 2) store.add(700, Component::Static);
        if (frame == 4) store.add(900, Component::WriteGroupOverride);
        if (frame == 6) store.set_parent(1000, 20);  // the chain splits in two below 20
        const std::string what = "frame " + std::to_string(frame);
        EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      }
      EXPECT_LE(frame_and_compare(gpu, cpu, store, "nothing changed"), 1.0);
      EXPECT_EQ(gpu.last_frame().dispatches, 0u);
    }
  }
}

// Bundles of parallel chains (levels of k entities, the one at position p the child of the one
// at position p above) walked by an invocation per chain: 12 chains (two workgroups) whose links
// carry every component mix, over frames of values (work lists and whole-order frames that
// skip the unchanged), Statics, overrides, and edits that break the bundle (a link re-parented
// to another chain, a link destroyed), against the reference and against the single invocation.
TEST_F(GpuVariants, BundlesOfParallelChainsMatchTheReferenceOverFrames) {
  for (bool chains : {true, false}) {
    for (uint32_t work_list_max : {4096u, 0u}) {
      SCOPED_TRACE(std::string(chains ? "bundles" : "single invocation") +
                   (work_list_max ? ", work lists" : ", whole order"));
      EntityStore store;
      ValueSource v(8);
      const uint32_t k = 12, links = 200;
      store.create(0);  // the root of every chain
      add_features(store, 0, kTranslation | kRotation, v);
      // Link j of chain c is entity 1 + j * k + c, so that every level lists its links in
      // chain order (the order is built in slot order).
      for (uint32_t j = 0; j < links; ++j)
        for (uint32_t c = 0; c < k; ++c) {
          const EntityId e = 1 + j * k + c;
          store.create(e);
          add_features(store, e, random_features(v), v);
          if (e % 97 == 5) store.set_matrix(e, MatrixComponent::LocalToParent, v.projective());
          store.set_parent(e, j == 0 ? 0 : e - k);
        }
      Propagator gpu = make_propagator(ctx(), {.work_list_max = work_list_max,
                                               .narrow_walk = NarrowWalk::SingleInvocation,
                                               .subgroup_chains = chains});
      CpuReference cpu;
      EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
      EXPECT_EQ(gpu.last_frame().bundle_steps > 0, chains);
      const uint32_t n = 1 + k * links;
      for (int frame = 0; frame < 8; ++frame) {
        for (uint32_t m = 0; m < 6; ++m) store.set_translation(1 + v.below(n - 1), v.vec(5));
        if (frame == 2) store.add(1 + 50 * k + 3, Component::Static);
        if (frame == 3) store.add(1 + 80 * k + 7, Component::WriteGroupOverride);
        if (frame == 5) store.set_parent(1 + 120 * k + 2, 1 + 119 * k + 9);  // two below one
        if (frame == 6) store.destroy(1 + 150 * k + 4);  // its child becomes a root
        const std::string what = "frame " + std::to_string(frame);
        EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      }
      EXPECT_LE(frame_and_compare(gpu, cpu, store, "nothing changed"), 1.0);
      EXPECT_EQ(gpu.last_frame().dispatches, 0u);
    }
  }
}

// A forest of 2,000 with three parallel chains of 200 below entity 7, deep enough to scan.
EntityStore forest_with_parallel_chains(ValueSource& v) {
  EntityStore store;
  for (EntityId id = 0; id < 2000; ++id) {
    store.create(id);
    add_features(store, id, kTranslation | kRotation | kScale, v);
    if (id > 0) store.set_parent(id, id / 4);
  }
  for (EntityId l = 0; l < 200; ++l)
    for (EntityId p = 0; p < 3; ++p) {
      const EntityId e = 10000 + 3 * l + p;
      store.create(e);
      add_features(store, e, kTranslation | kRotation, v);
      store.set_parent(e, l ? e - 3 : 7);
    }
  return store;
}

// Its own context, validated: the shared one keeps what earlier tests compiled.
VulkanContext fresh_context() {
  auto ctx = VulkanContext::create_headless({.validation = true});
  if (!ctx) {
    ADD_FAILURE() << ctx.error().message;
    std::abort();
  }
  return std::move(*ctx);
}

// A full frame also compiles the variants that the later frames of its scene reach for, since a
// driver's compile takes milliseconds: a hitch in whichever frame first needs one. Here a forest
// with three parallel chains deep enough to scan, walked as on a GPU (pointer jumping, scans):
// frames of values, of despawns that break the chains (the run jumped then, roots left below
// level 0), spawns and re-parents compile nothing.
TEST_F(GpuVariants, AFullFrameCompilesTheVariantsItsScenesLaterFramesReachFor) {
  ValueSource v(21);
  EntityStore store = forest_with_parallel_chains(v);
  VulkanContext own = fresh_context();
  // No compaction: the orphaned chain tails stay roots below level 0, whose dispatches test
  // which entities keep their own matrix (kFeatureFinalTest).
  Propagator gpu = make_propagator(own, {.compact_per_frame = 0, .narrow_walk = NarrowWalk::Jump});
  CpuReference cpu;
  ASSERT_LE(frame_and_compare(gpu, cpu, store, "first"), 1.0);
  EXPECT_GT(gpu.last_frame().pipelines_created, 0u);
  EXPECT_EQ(gpu.last_frame().scan_runs, 1u);
  auto frame = [&](const std::string& what) {
    EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    EXPECT_EQ(gpu.last_frame().pipelines_created, 0u) << what;
  };
  for (EntityId id = 0; id < 2000; id += 37) store.set_translation(id, v.vec(2));
  frame("values");
  // A link every 30 levels, chain after chain: no stretch of 64 aligned levels is left.
  for (EntityId l = 30; l < 200; l += 30) store.destroy(10000 + 3 * l + (l / 30) % 3);
  frame("chains broken");
  EXPECT_EQ(gpu.last_frame().scan_runs, 0u);
  EXPECT_GT(gpu.last_frame().jump_runs, 0u);
  EXPECT_GT(gpu.order().deep_roots(), 0u);
  for (EntityId e = 20000; e < 20020; ++e) {
    store.create(e);
    add_features(store, e, kTranslation, v);
    store.set_parent(e, v.below(2000));
  }
  frame("spawns");
  store.set_parent(1500, 3);
  store.set_parent(10000 + 3 * 100 + 1, 12);
  frame("re-parents");
  EXPECT_GT(gpu.order().deep_roots(), 0u);
  EXPECT_EQ(own.validation_counts().errors, 0u);
  EXPECT_EQ(own.validation_counts().warnings, 0u);
}

// The variants belong to the context: a second Propagator of it compiles none of those the first
// compiled and keeps running them after the first is gone; another context compiles its own.
TEST_F(GpuVariants, PropagatorsOfOneContextShareTheVariantsItCompiled) {
  ValueSource v(22);
  EntityStore store = forest_with_parallel_chains(v);
  VulkanContext own = fresh_context();
  const PropagatorOptions options{.narrow_walk = NarrowWalk::Jump};
  CpuReference cpu;
  auto first = std::make_unique<Propagator>(make_propagator(own, options));
  ASSERT_LE(frame_and_compare(*first, cpu, store, "first propagator"), 1.0);
  const uint32_t compiled = first->last_frame().pipelines_created;
  EXPECT_GT(compiled, 0u);

  Propagator second = make_propagator(own, options);
  ASSERT_LE(frame_and_compare(second, cpu, store, "second propagator"), 1.0);
  EXPECT_EQ(second.last_frame().pipelines_created, 0u) << "the first compiled what it needs";
  first.reset();
  for (int frame = 0; frame < 3; ++frame) {
    for (EntityId id = 0; id < 2000; id += 41) store.set_translation(id, v.vec(2));
    store.set_parent(10000 + 3 * (50 + frame) + 1, 5 + frame);
    const std::string what = "after the first is gone, frame " + std::to_string(frame);
    ASSERT_LE(frame_and_compare(second, cpu, store, what.c_str()), 1.0);
  }

  VulkanContext other = fresh_context();
  Propagator elsewhere = make_propagator(other, options);
  EntityStore again = forest_with_parallel_chains(v);
  CpuReference cpu_again;
  ASSERT_LE(frame_and_compare(elsewhere, cpu_again, again, "another context"), 1.0);
  EXPECT_EQ(elsewhere.last_frame().pipelines_created, compiled) << "its own, all of them";
  for (const VulkanContext* c : {&own, &other}) {
    EXPECT_EQ(c->validation_counts().errors, 0u);
    EXPECT_EQ(c->validation_counts().warnings, 0u);
  }
}

// Propagators of one context may be updated on different threads: the variants they compile
// land in the context's library under its lock, each compiled once. Two threads update a scene
// each at once (the same variants needed), then the frames are submitted in turn (the queue is
// the caller's to synchronize).
TEST_F(GpuVariants, PropagatorsOfOneContextUpdateOnTwoThreadsAtOnce) {
  const PropagatorOptions options{.narrow_walk = NarrowWalk::Jump};
  uint32_t alone = 0;  // what one Propagator compiles for such a scene
  {
    ValueSource v(40);
    EntityStore store = forest_with_parallel_chains(v);
    VulkanContext single = fresh_context();
    Propagator gpu = make_propagator(single, options);
    ASSERT_TRUE(gpu.update(store).ok());
    alone = gpu.last_frame().pipelines_created;
    ASSERT_TRUE(gpu.run_staged(store).ok());
  }
  ASSERT_GT(alone, 0u);

  VulkanContext own = fresh_context();
  ValueSource va(41), vb(42);
  EntityStore a = forest_with_parallel_chains(va), b = forest_with_parallel_chains(vb);
  Propagator pa = make_propagator(own, options), pb = make_propagator(own, options);
  CpuReference ca, cb;
  for (int frame = 0; frame < 3; ++frame) {
    if (frame > 0)
      for (auto [store, v] : {std::pair{&a, &va}, std::pair{&b, &vb}}) {
        for (EntityId id = 0; id < 2000; id += 29) store->set_translation(id, v->vec(2));
        store->destroy(10000 + 3 * (40 + frame) + frame);
      }
    Status in_thread = ok_status();
    std::thread other([&] { in_thread = pb.update(b); });
    const Status here = pa.update(a);
    other.join();
    ASSERT_TRUE(here.ok()) << here.error().message;
    ASSERT_TRUE(in_thread.ok()) << in_thread.error().message;
    if (frame == 0) {
      EXPECT_EQ(pa.last_frame().pipelines_created + pb.last_frame().pipelines_created, alone)
          << "each variant compiled once, by one of the two";
    }
    const std::string what = "frame " + std::to_string(frame);
    ASSERT_LE(frame_and_compare(pa, ca, a, (what + ", first").c_str(),
                                [&] { return pa.run_staged(a); }),
              1.0);
    ASSERT_LE(frame_and_compare(pb, cb, b, (what + ", second").c_str(),
                                [&] { return pb.run_staged(b); }),
              1.0);
  }
  EXPECT_EQ(own.validation_counts().errors, 0u);
  EXPECT_EQ(own.validation_counts().warnings, 0u);
}

// Non-affine matrices in deep runs, on every walk: pointer jumping keeps 4-row matrices in its
// scratch then (3-row ones otherwise), the workgroup and single-invocation walks read 4-row
// parents.
TEST_F(GpuVariants, EveryWalkKeepsTheFourthRowOfNonAffineMatricesInDeepRuns) {
  for (NarrowWalk walk :
       {NarrowWalk::Workgroup, NarrowWalk::SingleInvocation, NarrowWalk::Jump}) {
    SCOPED_TRACE(walk == NarrowWalk::Workgroup          ? "workgroup walk"
                 : walk == NarrowWalk::SingleInvocation ? "single-invocation walk"
                                                        : "pointer jumping");
    EntityStore store;
    ValueSource v(9);
    const uint32_t n = 3000;
    for (uint32_t i = 0; i < n; ++i) {
      store.create(i);
      add_features(store, i, random_features(v), v);
      if (i % 50 == 7) {
        store.remove(i, Component::Rotation);  // the user-written CompositeRotation is kept
        store.set_matrix(i, MatrixComponent::CompositeRotation, v.projective());
      }
      if (i == 0 || v.below(100) < 2) continue;
      store.set_parent(i, i - 1 - v.below(std::min<uint32_t>(i, 3)));
    }
    Propagator gpu = make_propagator(ctx(), {.narrow_walk = walk});
    CpuReference cpu;
    EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
    EXPECT_TRUE(gpu.last_frame().pass_features & kFeatureProjective);
    if (walk == NarrowWalk::Jump) {
      EXPECT_GE(gpu.last_frame().jump_runs, 1u);
    }
    for (int frame = 0; frame < 3; ++frame) {
      for (uint32_t k = 0; k < 40; ++k) store.set_translation(v.below(n), v.vec(5));
      const std::string what = "frame " + std::to_string(frame);
      EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
    }
  }
}

// In a work list, a level may hold one entity that hangs below an unlisted one: two chains of
// different lengths each changed at one link list one entity per level, the longer one's below
// the shorter one's end. They are two chains, not one.
TEST_F(GpuVariants, OneEntityLevelsUnderDifferentParentsAreNotOneChain) {
  EntityStore store;
  ValueSource v(7);
  const EntityId a = 0, b = 1000;  // chain A: 40 links, chain B: 60 links
  for (EntityId k = 0; k < 40; ++k) {
    store.create(a + k);
    add_features(store, a + k, kTranslation | kRotation, v);
    if (k) store.set_parent(a + k, a + k - 1);
  }
  for (EntityId k = 0; k < 60; ++k) {
    store.create(b + k);
    add_features(store, b + k, kTranslation | kRotation, v);
    if (k) store.set_parent(b + k, b + k - 1);
  }
  Propagator gpu =
      make_propagator(ctx(), {.narrow_walk = NarrowWalk::SingleInvocation});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  store.set_translation(a + 5, v.vec(5));   // lists A's levels 5..39
  store.set_translation(b + 40, v.vec(5));  // lists B's levels 40..59
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "two tails, one entity per level"), 1.0);
  EXPECT_FALSE(gpu.last_frame().full_pass) << "a work list";
  EXPECT_EQ(gpu.last_frame().chain_steps, 2u);
}

// A chain longer than one chain dispatch, in whole-order frames: each dispatch starts at its
// first change, and the one after a change starts at its top.
TEST_F(GpuVariants, AChainLongerThanADispatchStartsAtItsFirstChange) {
  const uint32_t n = 300'000;  // more than one dispatch of 262,144 levels
  EntityStore store = unit_step_chain(n);
  Propagator gpu = make_propagator(
      ctx(), {.work_list_max = 0, .narrow_walk = NarrowWalk::SingleInvocation});
  CpuReference cpu;
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
  EXPECT_EQ(gpu.last_frame().chain_steps, 2u);
  store.set_translation(n - 3, float3(0, 1, 0));  // in the second dispatch only
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "a change near the end"), 1.0);
  EXPECT_EQ(gpu.last_frame().chain_steps, 1u);
  store.set_translation(10, float3(0, 0, 1));  // both: the second from its top
  EXPECT_LE(frame_and_compare(gpu, cpu, store, "a change near the top"), 1.0);
  EXPECT_EQ(gpu.last_frame().chain_steps, 2u);
  auto world = gpu.read_back();
  ASSERT_TRUE(world.ok());
  EXPECT_EQ((*world)[store.slot_of(n - 1)][3], float4(float(n - 2), 1, 1, 1));
}

// Chains and bundles with every array in 16 KiB pieces (PropagatorOptions::max_buffer_bytes =
// kMinBufferBytes): the chain pass and the bundle pass reach the slots, the level table and the
// list through the piece tables, specialized or not, with parents and children in different
// pieces and a chain of 5,000 levels spanning three pieces of the level table and two of the
// order.
TEST_F(GpuVariants, ChainsAndBundlesMatchTheReferenceWithEveryArrayInPieces) {
  for (bool specialize : {true, false}) {
    for (uint32_t work_list_max : {4096u, 0u}) {
      SCOPED_TRACE(std::string(specialize ? "specialized" : "general") +
                   (work_list_max ? ", work lists" : ", whole order"));
      EntityStore store;
      ValueSource v(10);
      const uint32_t chain = 5000, k = 10, links = 300;
      for (EntityId e = 0; e < chain; ++e) {
        store.create(e);
        add_features(store, e, random_features(v), v);
        if (e % 389 == 11) store.set_matrix(e, MatrixComponent::LocalToParent, v.projective());
        if (e > 0) store.set_parent(e, e - 1);
      }
      // A bundle of k chains below one root; link j of chain c is bundle + 1 + j * k + c.
      const EntityId bundle = chain;
      store.create(bundle);
      add_features(store, bundle, kTranslation | kRotation, v);
      for (uint32_t j = 0; j < links; ++j)
        for (uint32_t c = 0; c < k; ++c) {
          const EntityId e = bundle + 1 + j * k + c;
          store.create(e);
          add_features(store, e, random_features(v), v);
          store.set_parent(e, j == 0 ? bundle : e - k);
        }
      const uint32_t n = chain + 1 + k * links;
      Propagator gpu = make_propagator(ctx(), {.work_list_max = work_list_max,
                                               .narrow_walk = NarrowWalk::SingleInvocation,
                                               .max_buffer_bytes = kMinBufferBytes,
                                               .specialize = specialize});
      CpuReference cpu;
      EXPECT_LE(frame_and_compare(gpu, cpu, store, "first frame"), 1.0);
      EXPECT_GE(gpu.last_frame().chain_steps, 1u);
      EXPECT_GE(gpu.last_frame().bundle_steps, 1u);
      EXPECT_FALSE(gpu.last_frame().descriptors);
      EXPECT_GE(gpu.last_frame().slot_pieces, n / 256);
      EXPECT_LE(gpu.last_frame().largest_buffer_bytes, kMinBufferBytes);
      for (int frame = 0; frame < 5; ++frame) {
        for (uint32_t m = 0; m < 4; ++m) store.set_translation(v.below(n), v.vec(5));
        store.set_translation(chain - 1 - v.below(300), v.vec(5));  // a chain's short tail
        if (frame == 1) store.add(2600, Component::Static);
        if (frame == 3) store.set_parent(bundle + 1 + 200 * k + 4, bundle + 1 + 199 * k + 6);
        const std::string what = "frame " + std::to_string(frame);
        EXPECT_LE(frame_and_compare(gpu, cpu, store, what.c_str()), 1.0);
      }
    }
  }
}

}  // namespace
}  // namespace tprop::test
