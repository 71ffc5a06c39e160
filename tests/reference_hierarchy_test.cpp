// The CPU reference over hierarchies and over frames: propagation, hierarchy edits, cycles,
// Static and WriteGroupOverride. Expected matrices are written out by hand (row-major literals
// below); most cases use translations and quarter turns so the arithmetic is easy to follow.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "compose.h"
#include "depth_order.h"
#include "entity_store.h"
#include "reference.h"

namespace tprop {
namespace {

using R4 = std::array<std::array<double, 4>, 4>;

R4 rows(std::array<double, 4> r0, std::array<double, 4> r1, std::array<double, 4> r2) {
  return R4{r0, r1, r2, std::array<double, 4>{0, 0, 0, 1}};
}
R4 T(double x, double y, double z) { return rows({1, 0, 0, x}, {0, 1, 0, y}, {0, 0, 1, z}); }
const R4 kI = T(0, 0, 0);

float4x4 to_glm(const R4& m) {
  float4x4 out(1.0f);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) out[c][r] = static_cast<float>(m[r][c]);
  return out;
}

// Inputs here are small integers and sqrt(1/2) (quarter-turn quaternions, relative error
// 2^-24): a few 1e-7 per rotation entry, times translations of at most ~10, stays far below
// 1e-5 while any wrong propagation moves an entry by at least 1.
void expect_matrix(const float4x4& got, const R4& want) {
  double magnitude = 1.0;
  for (const auto& r : want)
    for (double v : r) magnitude = std::max(magnitude, std::abs(v));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_NEAR(got[c][r], want[r][c], 1e-5 * magnitude) << "row " << r << " column " << c;
}

const float kHalfSqrt2 = 0.70710678118654752f;
const quat kRz90 = make_quat(0, 0, kHalfSqrt2, kHalfSqrt2);

// The frame protocol every backend follows (common semantics): take the changes, re-sort when
// the hierarchy changed, evaluate, then mark Statics baked.
class Frames {
 public:
  EntityStore store;

  void step() {
    const StoreChanges changes = store.take_changes();
    if (changes.hierarchy || first_) order_ = sort_by_depth(store);
    first_ = false;
    reference_.evaluate(store, order_, world_);
    store.mark_statics_baked();
  }
  const float4x4& world(EntityId id) const {
    const uint32_t slot = store.slot_of(id);
    EXPECT_NE(slot, EntityStore::kNoSlot) << "entity " << id;
    return world_[order_.position[slot]];
  }
  const DepthOrder& order() const { return order_; }

 private:
  CpuReference reference_;
  DepthOrder order_;
  std::vector<float4x4> world_;
  bool first_ = true;
};

void create_at(EntityStore& store, EntityId id, float3 translation) {
  store.create(id);
  store.set_translation(id, translation);
}

// ---------------------------------------------------------------------------------------------
TEST(ReferenceHierarchy, ChildWorldIsParentWorldTimesLocalDownAChain) {
  Frames f;
  // A: T(1,0,0) * Rz90. B under A: T(1,0,0). C under B: T(0,1,0) * Scale 2.
  create_at(f.store, 1, float3(1, 0, 0));
  f.store.set_rotation(1, kRz90);
  create_at(f.store, 2, float3(1, 0, 0));
  f.store.set_parent(2, 1);
  create_at(f.store, 3, float3(0, 1, 0));
  f.store.set_scale(3, 2.0f);
  f.store.set_parent(3, 2);
  f.step();
  expect_matrix(f.world(1), rows({0, -1, 0, 1}, {1, 0, 0, 0}, {0, 0, 1, 0}));
  // Rz90 turns B's offset (1,0,0) into (0,1,0): B sits at (1,1,0), still turned.
  expect_matrix(f.world(2), rows({0, -1, 0, 1}, {1, 0, 0, 1}, {0, 0, 1, 0}));
  // C's offset (0,1,0) turns into (-1,0,0): C at (0,1,0), turned and scaled by 2.
  expect_matrix(f.world(3), rows({0, -2, 0, 0}, {2, 0, 0, 1}, {0, 0, 2, 0}));
}

TEST(ReferenceHierarchy, ChildrenAreEvaluatedAfterParentsWhateverTheCreationOrder) {
  Frames f;
  // Created leaf first, and with ids in reverse order of depth.
  create_at(f.store, 30, float3(0, 0, 3));
  create_at(f.store, 20, float3(0, 2, 0));
  create_at(f.store, 10, float3(1, 0, 0));
  f.store.set_parent(30, 20);
  f.store.set_parent(20, 10);
  f.step();
  expect_matrix(f.world(30), T(1, 2, 3));
}

TEST(ReferenceHierarchy, ReparentedChildFollowsItsNewParent) {
  Frames f;
  create_at(f.store, 1, float3(10, 0, 0));
  create_at(f.store, 2, float3(0, 20, 0));
  create_at(f.store, 3, float3(1, 0, 0));
  create_at(f.store, 4, float3(0, 0, 1));  // grandchild under 3
  f.store.set_parent(3, 1);
  f.store.set_parent(4, 3);
  f.step();
  expect_matrix(f.world(3), T(11, 0, 0));
  expect_matrix(f.world(4), T(11, 0, 1));
  f.store.set_parent(3, 2);
  f.step();
  expect_matrix(f.world(3), T(1, 20, 0));
  expect_matrix(f.world(4), T(1, 20, 1));
}

TEST(ReferenceHierarchy, RemovingParentMakesTheChildARootWithItsLocalMatrix) {
  Frames f;
  create_at(f.store, 1, float3(10, 0, 0));
  f.store.set_scale(1, 2.0f);
  create_at(f.store, 2, float3(1, 0, 0));
  f.store.add(2, Component::ParentScaleInverse);  // compensates the parent's scale while attached
  f.store.set_parent(2, 1);
  f.step();
  // Parent world T(10,0,0) S(2); child local T(1,0,0) S(1/2): world translation 10 + 2*1.
  expect_matrix(f.world(2), T(12, 0, 0));
  f.store.remove(2, Component::Parent);
  f.step();
  // A root ignores ParentScaleInverse: world = T(1,0,0).
  expect_matrix(f.world(2), T(1, 0, 0));
  EXPECT_FALSE(f.order().attached(f.order().position[f.store.slot_of(2)]));
}

TEST(ReferenceHierarchy, DestroyedParentsChildrenBecomeRootsAndKeepTheirOwnChildren) {
  Frames f;
  create_at(f.store, 1, float3(10, 0, 0));
  create_at(f.store, 2, float3(1, 0, 0));
  create_at(f.store, 3, float3(0, 1, 0));
  create_at(f.store, 4, float3(0, 0, 1));
  f.store.set_parent(2, 1);
  f.store.set_parent(4, 1);
  f.store.set_parent(3, 2);
  f.step();
  expect_matrix(f.world(3), T(11, 1, 0));
  f.store.destroy(1);
  f.step();
  expect_matrix(f.world(2), T(1, 0, 0));
  expect_matrix(f.world(4), T(0, 0, 1));
  expect_matrix(f.world(3), T(1, 1, 0));
  EXPECT_FALSE(f.store.has(2, Component::Parent));
  // A new entity with the destroyed id does not re-adopt them: their Parent is gone.
  create_at(f.store, 1, float3(50, 0, 0));
  f.step();
  expect_matrix(f.world(2), T(1, 0, 0));
}

TEST(ReferenceHierarchy, UnknownParentStandsAtTheRootUntilThatEntityIsCreated) {
  Frames f;
  create_at(f.store, 2, float3(1, 0, 0));
  f.store.set_scale(2, 3.0f);
  f.store.set_parent(2, 42);
  f.step();
  expect_matrix(f.world(2), rows({3, 0, 0, 1}, {0, 3, 0, 0}, {0, 0, 3, 0}));
  EXPECT_EQ(f.order().unknown_parents, 1u);
  create_at(f.store, 42, float3(0, 0, 7));
  f.step();
  expect_matrix(f.world(2), rows({3, 0, 0, 1}, {0, 3, 0, 0}, {0, 0, 3, 7}));
}

TEST(ReferenceHierarchy, UnknownParentRootUsesUserLocalToWorldNotLocalToParent) {
  Frames f;
  f.store.create(2);
  f.store.set_matrix(2, MatrixComponent::LocalToWorld, to_glm(T(4, 5, 6)));
  f.store.set_matrix(2, MatrixComponent::LocalToParent, to_glm(T(7, 8, 9)));
  f.store.set_parent(2, 42);
  f.step();
  expect_matrix(f.world(2), T(4, 5, 6));
}

TEST(ReferenceHierarchy, SelfParentedEntityIsARootWithItsLocalMatrix) {
  Frames f;
  create_at(f.store, 5, float3(1, 2, 3));
  f.store.set_parent(5, 5);
  create_at(f.store, 6, float3(0, 0, 1));
  f.store.set_parent(6, 5);  // below the one-entity cycle: follows it
  f.step();
  expect_matrix(f.world(5), T(1, 2, 3));
  expect_matrix(f.world(6), T(1, 2, 4));
  EXPECT_EQ(f.order().cycles_broken, 1u);
}

TEST(ReferenceHierarchy, TwoCycleMembersStandAtRootUntilResolved) {
  Frames f;
  create_at(f.store, 1, float3(1, 0, 0));
  f.store.add(1, Component::ParentScaleInverse);  // ignored while 1 is not attached
  create_at(f.store, 2, float3(0, 2, 0));
  f.store.set_scale(2, 2.0f);
  create_at(f.store, 3, float3(0, 0, 3));
  f.store.set_parent(1, 2);
  f.store.set_parent(2, 1);
  f.store.set_parent(3, 1);
  f.step();
  expect_matrix(f.world(1), T(1, 0, 0));
  expect_matrix(f.world(2), rows({2, 0, 0, 0}, {0, 2, 0, 2}, {0, 0, 2, 0}));
  expect_matrix(f.world(3), T(1, 0, 3));  // hangs below member 1 and follows it
  EXPECT_EQ(f.order().entities_on_cycles, 2u);

  // Resolve: 2 drops its Parent, so 1 hangs below 2 and compensates its scale.
  f.store.remove(2, Component::Parent);
  f.step();
  // World(1) = T(0,2,0) S(2) * T(1,0,0) S(1/2) = T(2,2,0).
  expect_matrix(f.world(1), T(2, 2, 0));
  expect_matrix(f.world(3), T(2, 2, 3));
}

TEST(ReferenceHierarchy, ThreeCycleMembersStandAtRootAndEntitiesBelowFollowThem) {
  Frames f;
  create_at(f.store, 1, float3(1, 0, 0));
  create_at(f.store, 2, float3(0, 1, 0));
  create_at(f.store, 3, float3(0, 0, 1));
  create_at(f.store, 4, float3(5, 0, 0));
  create_at(f.store, 5, float3(0, 5, 0));
  f.store.set_parent(1, 2);
  f.store.set_parent(2, 3);
  f.store.set_parent(3, 1);
  f.store.set_parent(4, 3);
  f.store.set_parent(5, 4);
  f.step();
  expect_matrix(f.world(1), T(1, 0, 0));
  expect_matrix(f.world(2), T(0, 1, 0));
  expect_matrix(f.world(3), T(0, 0, 1));
  expect_matrix(f.world(4), T(5, 0, 1));
  expect_matrix(f.world(5), T(5, 5, 1));

  // Resolve by re-parenting 3 onto the chain's outside: 3 root, 2 under 3, 1 under 2.
  create_at(f.store, 9, float3(0, 0, 10));
  f.store.set_parent(3, 9);
  f.step();
  expect_matrix(f.world(3), T(0, 0, 11));
  expect_matrix(f.world(2), T(0, 1, 11));
  expect_matrix(f.world(1), T(1, 1, 11));
  expect_matrix(f.world(5), T(5, 5, 11));
  EXPECT_EQ(f.order().cycles_broken, 0u);
}

// ---------------------------------------------------------------------------------------------
TEST(ReferenceHierarchy, StaticIsFrozenAfterItsFirstFrameWhileChildrenStillFollowIt) {
  Frames f;
  create_at(f.store, 1, float3(1, 0, 0));  // moving parent
  create_at(f.store, 2, float3(0, 1, 0));  // Static
  f.store.add(2, Component::Static);
  f.store.set_parent(2, 1);
  create_at(f.store, 3, float3(0, 0, 1));  // child of the Static
  f.store.set_parent(3, 2);
  f.step();
  expect_matrix(f.world(2), T(1, 1, 0));
  expect_matrix(f.world(3), T(1, 1, 1));

  // The parent moves, the Static's own translation changes, the child moves.
  f.store.set_translation(1, float3(5, 0, 0));
  f.store.set_translation(2, float3(0, 9, 0));
  f.store.set_translation(3, float3(0, 0, 2));
  f.step();
  expect_matrix(f.world(1), T(5, 0, 0));
  expect_matrix(f.world(2), T(1, 1, 0));
  expect_matrix(f.world(3), T(1, 1, 2));

  // Re-parenting does not move it either.
  create_at(f.store, 7, float3(0, 0, 100));
  f.store.set_parent(2, 7);
  f.step();
  expect_matrix(f.world(2), T(1, 1, 0));
  expect_matrix(f.world(3), T(1, 1, 2));

  // Removing Static lets it follow again; adding it back freezes the value of that frame.
  f.store.remove(2, Component::Static);
  f.step();
  expect_matrix(f.world(2), T(0, 9, 100));
  f.store.add(2, Component::Static);
  f.step();
  expect_matrix(f.world(2), T(0, 9, 100));
  f.store.set_translation(7, float3(0, 0, -100));
  f.step();
  expect_matrix(f.world(2), T(0, 9, 100));
  expect_matrix(f.world(3), T(0, 9, 102));
}

TEST(ReferenceHierarchy, NewStaticEntityInARecycledSlotIsComputedAfresh) {
  Frames f;
  create_at(f.store, 10, float3(1, 0, 0));
  f.store.add(10, Component::Static);
  f.step();
  const uint32_t slot = f.store.slot_of(10);
  f.store.destroy(10);
  create_at(f.store, 11, float3(2, 0, 0));
  f.store.add(11, Component::Static);
  ASSERT_EQ(f.store.slot_of(11), slot) << "the test needs the slot to be reused";
  f.step();
  expect_matrix(f.world(11), T(2, 0, 0));
}

TEST(ReferenceHierarchy, StaticsAreComputedEveryFrameUntilTheFrameEnds) {
  // Two evaluations inside one frame (no mark_statics_baked between them) both compute.
  EntityStore store;
  create_at(store, 1, float3(1, 0, 0));
  store.add(1, Component::Static);
  store.take_changes();
  const DepthOrder order = sort_by_depth(store);
  CpuReference reference;
  std::vector<float4x4> world;
  reference.evaluate(store, order, world);
  expect_matrix(world[0], T(1, 0, 0));
  store.set_translation(1, float3(3, 0, 0));
  reference.evaluate(store, order, world);
  expect_matrix(world[0], T(3, 0, 0));
  store.mark_statics_baked();
  store.set_translation(1, float3(4, 0, 0));
  reference.evaluate(store, order, world);
  expect_matrix(world[0], T(3, 0, 0));
}

// ---------------------------------------------------------------------------------------------
TEST(ReferenceHierarchy, WriteGroupOverrideTakesTheUserLocalToWorldAndChildrenPropagateIt) {
  Frames f;
  create_at(f.store, 1, float3(100, 0, 0));  // a parent the override ignores
  f.store.set_scale(1, 5.0f);
  create_at(f.store, 2, float3(7, 7, 7));  // ignored: overridden
  f.store.set_rotation(2, kRz90);
  f.store.add(2, Component::WriteGroupOverride);
  const R4 user = rows({0, -1, 0, 5}, {1, 0, 0, 0}, {0, 0, 1, 0});  // T(5,0,0) * Rz90
  f.store.set_matrix(2, MatrixComponent::LocalToWorld, to_glm(user));
  f.store.set_parent(2, 1);
  create_at(f.store, 3, float3(1, 0, 0));
  f.store.set_parent(3, 2);
  f.step();
  expect_matrix(f.world(2), user);
  // (1,0,0) turned by Rz90 is (0,1,0): the child sits at (5,1,0), turned.
  expect_matrix(f.world(3), rows({0, -1, 0, 5}, {1, 0, 0, 1}, {0, 0, 1, 0}));

  // The user writes a new value: it is used at once.
  f.store.set_matrix(2, MatrixComponent::LocalToWorld, to_glm(T(0, 0, 9)));
  f.step();
  expect_matrix(f.world(3), T(1, 0, 9));
}

TEST(ReferenceHierarchy, WriteGroupOverrideWithoutUserValueIsIdentity) {
  Frames f;
  create_at(f.store, 1, float3(3, 0, 0));
  f.store.add(1, Component::WriteGroupOverride);
  create_at(f.store, 2, float3(0, 1, 0));
  f.store.set_parent(2, 1);
  f.step();
  expect_matrix(f.world(1), kI);
  expect_matrix(f.world(2), T(0, 1, 0));
}

TEST(ReferenceHierarchy, StaticWriteGroupOverrideFreezesTheUserValueOfItsFirstFrame) {
  Frames f;
  f.store.create(1);
  f.store.add(1, Component::WriteGroupOverride);
  f.store.add(1, Component::Static);
  f.store.set_matrix(1, MatrixComponent::LocalToWorld, to_glm(T(1, 0, 0)));
  f.step();
  f.store.set_matrix(1, MatrixComponent::LocalToWorld, to_glm(T(2, 0, 0)));
  f.step();
  expect_matrix(f.world(1), T(1, 0, 0));
}

// ---------------------------------------------------------------------------------------------
// A million-deep chain, the root at the origin and each level below it T(1,0,0): no recursion
// anywhere, so no stack overflow. Every intermediate value is an integer below 2^24 with an exact
// identity rotation, so each float multiply-add is exact and the last entity's x is exactly
// 999999 (a tolerance of 0 is right; any drift would mean a wrong operation order).
TEST(ReferenceHierarchy, MillionDeepChainPropagatesWithoutRecursion) {
  constexpr uint32_t kDepth = 1'000'000;
  EntityStore store;
  store.reserve(kDepth);
  for (uint32_t i = 0; i < kDepth; ++i) {
    store.create(i);
    store.set_translation(i, float3(i == 0 ? 0.0f : 1.0f, 0, 0));
    if (i > 0) store.set_parent(i, i - 1);
  }
  DepthOrder order;
  const std::vector<float4x4> world = evaluate_once(store, &order);
  ASSERT_EQ(order.level_count(), kDepth);
  const float4x4& last = world[order.position[store.slot_of(kDepth - 1)]];
  EXPECT_EQ(last[3][0], 999'999.0f);  // entity i sits at x = i
  EXPECT_EQ(last[3][1], 0.0f);
  EXPECT_EQ(last[0][0], 1.0f);
  const float4x4& middle = world[order.position[store.slot_of(499'999)]];
  EXPECT_EQ(middle[3][0], 499'999.0f);
}

TEST(ReferenceHierarchy, WorldMatricesByIdMatchesThePositionedResult) {
  EntityStore store;
  create_at(store, 8, float3(1, 0, 0));
  create_at(store, 9, float3(0, 1, 0));
  store.set_parent(9, 8);
  const auto by_id = world_matrices_by_id(store);
  ASSERT_EQ(by_id.size(), 2u);
  expect_matrix(by_id.at(8), T(1, 0, 0));
  expect_matrix(by_id.at(9), T(1, 1, 0));
}

// README (Semantics): a scale factor without a finite reciprocal inverts to 0 in the
// ParentScaleInverse a parent writes, so a child under a parent scaled to 0 collapses with it and
// stays finite: world = T(5,0,0) S(0) * T(1,0,0) S(0) = all linear parts 0, origin at the
// parent's (5,0,0), since the parent's zero x axis carries the child's offset to nothing.
TEST(ReferenceHierarchy, ChildWithParentScaleInverseUnderAZeroScaleCollapsesFinite) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, float3(5, 0, 0));
  store.set_scale(1, 0.0f);
  store.create(2);
  store.set_parent(2, 1);
  store.set_translation(2, float3(1, 0, 0));
  store.add(2, Component::ParentScaleInverse);
  const auto world = world_matrices_by_id(store);
  expect_matrix(world.at(2), rows({0, 0, 0, 5}, {0, 0, 0, 0}, {0, 0, 0, 0}));
  ASSERT_TRUE(degenerate_scale_inverse_warning(store).has_value());
  EXPECT_NE(degenerate_scale_inverse_warning(store)->find("first: entity 2 under entity 1"),
            std::string::npos);
}

// NonUniformScale (1, 0, 1): only y collapses. Parent T(5,6,7) diag(1,0,1), child T(1,2,3) and
// the written inverse diag(1,0,1): world translation (5+1, 6+0*2, 7+3), linear diag(1,0,1).
TEST(ReferenceHierarchy, ZeroNonUniformScaleFactorCollapsesOnlyItsAxis) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, float3(5, 6, 7));
  store.set_non_uniform_scale(1, float3(1, 0, 1));
  store.create(2);
  store.set_parent(2, 1);
  store.set_translation(2, float3(1, 2, 3));
  store.add(2, Component::ParentScaleInverse);
  expect_matrix(world_matrices_by_id(store).at(2), rows({1, 0, 0, 6}, {0, 0, 0, 6}, {0, 0, 1, 10}));
  // A subnormal factor has no finite reciprocal either; a normal tiny one inverts as usual.
  store.set_non_uniform_scale(1, float3(1, 1e-39f, 1));
  EXPECT_EQ(parent_scale_inverse_from(store, store.slot_of(1))->operator[](1)[1], 0.0f);
  store.set_non_uniform_scale(1, float3(1, 1e-30f, 1));
  EXPECT_FLOAT_EQ(parent_scale_inverse_from(store, store.slot_of(1))->operator[](1)[1], 1e30f);
  EXPECT_FALSE(degenerate_scale_inverse_warning(store).has_value());
}

// A singular CompositeScale is inverted factor by factor: T(sp) S(0) T(-sp) gives
// T(sp) S^+ T(-sp) = linear 0, origin sp; a user-written singular one gives diag(0, 0, 0, 1).
TEST(ReferenceHierarchy, SingularCompositeScaleWritesItsFactorwiseInverse) {
  EntityStore store;
  store.create(1);
  store.add(1, Component::CompositeScale);
  store.set_pivot(1, PivotComponent::ScalePivot, float3(1, 1, 0));
  store.set_scale(1, 0.0f);
  const uint32_t slot = store.slot_of(1);
  expect_matrix(*parent_scale_inverse_from(store, slot),
                rows({0, 0, 0, 1}, {0, 0, 0, 1}, {0, 0, 0, 0}));
  EXPECT_TRUE(writes_degenerate_scale_inverse(store, slot));

  EntityStore user;
  user.create(1);
  user.set_matrix(1, MatrixComponent::CompositeScale,
                  to_glm(rows({2, 0, 0, 3}, {0, 0, 0, 0}, {0, 0, 1, 0})));
  expect_matrix(*parent_scale_inverse_from(user, user.slot_of(1)),
                rows({0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}));
  EXPECT_TRUE(writes_degenerate_scale_inverse(user, user.slot_of(1)));
}

}  // namespace
}  // namespace tprop
