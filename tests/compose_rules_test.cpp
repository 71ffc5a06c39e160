// The Unity DOTS rule table (unity-dots-transform-system.txt, as settled by NOTES.md), one line
// at a time. Every expected matrix is written here by hand: either as literal numbers or as a
// product of primitive matrices written out literally below (T, S, 90-degree rotations), with
// this file's own row-major multiply. Nothing expected comes from compose.cpp or glm.
//
// Each case builds a two-entity store (parent id 1, child id 2), checks the child's local matrix
// (local_matrix) and its LocalToWorld from the CPU reference (parent world * local when attached).
// User-written LocalToWorld / LocalToParent / CompositeRotation / CompositeScale /
// ParentScaleInverse values are set on every case with distinctive numbers, so each case also
// shows that a written component overrides them, or that they are kept when nothing writes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "compose.h"
#include "depth_order.h"
#include "entity_store.h"
#include "reference.h"

namespace tprop {
namespace {

// ---------------------------------------------------------------------------------------------
// Row-major literal matrices and their product, independent of glm.
using R4 = std::array<std::array<double, 4>, 4>;
using R3 = std::array<std::array<double, 3>, 3>;

R4 rows(std::array<double, 4> r0, std::array<double, 4> r1, std::array<double, 4> r2) {
  return R4{r0, r1, r2, std::array<double, 4>{0, 0, 0, 1}};
}
const R4 kI = rows({1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0});
R4 T(double x, double y, double z) { return rows({1, 0, 0, x}, {0, 1, 0, y}, {0, 0, 1, z}); }
R4 S(double x, double y, double z) { return rows({x, 0, 0, 0}, {0, y, 0, 0}, {0, 0, z, 0}); }
R4 rot(const R3& r) {
  return rows({r[0][0], r[0][1], r[0][2], 0}, {r[1][0], r[1][1], r[1][2], 0},
              {r[2][0], r[2][1], r[2][2], 0});
}
R4 mul(const R4& a, const R4& b) {
  R4 out{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) out[i][j] += a[i][k] * b[k][j];
  return out;
}
R4 product(std::initializer_list<R4> factors) {
  R4 out = kI;
  for (const R4& f : factors) out = mul(out, f);
  return out;
}

// Right-handed 90-degree turns: Rx takes +y to +z, Ry takes +z to +x, Rz takes +x to +y.
const R3 kRx90{{{1, 0, 0}, {0, 0, -1}, {0, 1, 0}}};
const R3 kRy90{{{0, 0, 1}, {0, 1, 0}, {-1, 0, 0}}};
const R3 kRz90{{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}}};

// Compares a glm (column-major) matrix with a row-major literal. The inputs are exact in float
// except sqrt(1/2) in the 90-degree quaternions (relative error 2^-24), which puts an error of a
// few 1e-7 into each rotation entry; multiplied by translations and scales of at most ~10 that
// stays below 1e-5, while every wrong rule changes some entry by at least 0.5.
void expect_matrix(const float4x4& got, const R4& want) {
  double magnitude = 1.0;
  for (const auto& r : want)
    for (double v : r) magnitude = std::max(magnitude, std::abs(v));
  const double tol = 1e-5 * magnitude;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_NEAR(got[c][r], want[r][c], tol) << "row " << r << " column " << c;
}

float4x4 to_glm(const R4& m) {
  float4x4 out(1.0f);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) out[c][r] = static_cast<float>(m[r][c]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The component values every case uses, and their matrices written out by hand.
const float kHalfSqrt2 = 0.70710678118654752f;
const quat kQuatRz90 = make_quat(0, 0, kHalfSqrt2, kHalfSqrt2);  // Rotation
const quat kQuatRx90 = make_quat(kHalfSqrt2, 0, 0, kHalfSqrt2);  // PostRotation
const float kQuarter = 1.57079632679489662f;                     // 90 degrees in radians

const R4 kT = T(1, 2, 3);       // Translation (1, 2, 3)
const R4 kR = rot(kRz90);       // Rotation: 90 degrees about z
const R4 kPR = rot(kRx90);      // PostRotation: 90 degrees about x
const R4 kS = S(2, 2, 2);       // Scale 2
const R4 kNUS = S(2, 3, 0.5);   // NonUniformScale (2, 3, 0.5)
const R4 kRPT = T(0, 0, 5);     // RotationPivotTranslation (0, 0, 5)
const R4 kRP = T(1, 0, 0);      // RotationPivot (1, 0, 0)
const R4 kRPinv = T(-1, 0, 0);
const R4 kSPT = T(0, 4, 0);     // ScalePivotTranslation (0, 4, 0)
const R4 kSP = T(1, 1, 0);      // ScalePivot (1, 1, 0)
const R4 kSPinv = T(-1, -1, 0);
// User-written matrices, distinctive so that keeping or overriding them shows.
const R4 kUserCR = mul(T(0, 0, 7), rot(kRy90));                        // Ry90 then up 7 in z
const R4 kUserCS = rows({3, 0, 0, 0}, {0, 1, 0, 1}, {0, 0, 2, 0});
const R4 kUserPSI = S(0.25, 4, 1);
const R4 kUserLTW = rows({1, 0, 0, 9}, {0, 0, -1, 8}, {0, 1, 0, 7});
const R4 kUserLTP = rows({0, 1, 0, 4}, {-1, 0, 0, 5}, {0, 0, 1, 6});

// What an entity carries in a case. Matrix components are always added with their user value.
enum Ing {
  Tr, Rot, PostRot, Scl, Nus, CompRot, CompScl, Rpt, Rp, Spt, Sp, Psi, UserLtw, UserLtp,
  EulerXYZ  // RotationEulerXYZ(90, 0, 0) degrees: the same matrix as Rot would be Rx90, see uses
};

void apply(EntityStore& store, EntityId e, const std::vector<Ing>& ingredients) {
  for (Ing i : ingredients) {
    switch (i) {
      case Tr: store.set_translation(e, float3(1, 2, 3)); break;
      case Rot: store.set_rotation(e, kQuatRz90); break;
      case PostRot: store.set_post_rotation(e, kQuatRx90); break;
      case Scl: store.set_scale(e, 2.0f); break;
      case Nus: store.set_non_uniform_scale(e, float3(2, 3, 0.5f)); break;
      case CompRot: store.set_matrix(e, MatrixComponent::CompositeRotation, to_glm(kUserCR)); break;
      case CompScl: store.set_matrix(e, MatrixComponent::CompositeScale, to_glm(kUserCS)); break;
      case Rpt:
        store.set_pivot(e, PivotComponent::RotationPivotTranslation, float3(0, 0, 5));
        break;
      case Rp: store.set_pivot(e, PivotComponent::RotationPivot, float3(1, 0, 0)); break;
      case Spt: store.set_pivot(e, PivotComponent::ScalePivotTranslation, float3(0, 4, 0)); break;
      case Sp: store.set_pivot(e, PivotComponent::ScalePivot, float3(1, 1, 0)); break;
      case Psi: store.set_matrix(e, MatrixComponent::ParentScaleInverse, to_glm(kUserPSI)); break;
      case UserLtw: store.set_matrix(e, MatrixComponent::LocalToWorld, to_glm(kUserLTW)); break;
      case UserLtp: store.set_matrix(e, MatrixComponent::LocalToParent, to_glm(kUserLTP)); break;
      case EulerXYZ: store.set_rotation_euler(e, EulerOrder::XYZ, float3(kQuarter, 0, 0)); break;
    }
  }
}

enum class Where { Root, Attached, UnknownParent };

struct RuleCase {
  std::string rule;                 // the spec line (or NOTES.md sentence) under test
  std::vector<Ing> child;
  R4 expected_local;
  Where where = Where::Root;
  std::vector<Ing> parent = {};
  R4 parent_world = kI;             // hand-derived LocalToWorld of the parent (a root)
};

constexpr EntityId kParent = 1, kChild = 2;

// Builds the case, then checks the child's local matrix and its LocalToWorld.
void run_case(const RuleCase& c, bool with_user_matrices) {
  SCOPED_TRACE(c.rule);
  EntityStore store;
  store.create(kParent);
  store.create(kChild);
  apply(store, kParent, c.parent);
  apply(store, kChild, c.child);
  if (with_user_matrices) apply(store, kChild, {UserLtw, UserLtp});
  if (c.where == Where::Attached) store.set_parent(kChild, kParent);
  if (c.where == Where::UnknownParent) store.set_parent(kChild, 99);

  DepthOrder order;
  const std::vector<float4x4> world = evaluate_once(store, &order);
  const uint32_t slot = store.slot_of(kChild);
  const uint32_t pos = order.position[slot];
  ASSERT_EQ(order.attached(pos), c.where == Where::Attached);
  const uint32_t parent_slot =
      order.attached(pos) ? order.slot[order.parent[pos]] : EntityStore::kNoSlot;
  {
    SCOPED_TRACE("local matrix");
    expect_matrix(local_matrix(store, slot, parent_slot), c.expected_local);
  }
  {
    SCOPED_TRACE("LocalToWorld");
    const R4 expected_world =
        c.where == Where::Attached ? mul(c.parent_world, c.expected_local) : c.expected_local;
    expect_matrix(world[pos], expected_world);
  }
}

void run_table(const std::vector<RuleCase>& table) {
  for (const RuleCase& c : table) run_case(c, /*with_user_matrices=*/true);
}

// ---------------------------------------------------------------------------------------------
// Section 1 / Section 4: TRSToLocalToWorld, and the same lines for LocalToParent (Sections 2, 5).
std::vector<RuleCase> trs_cases(Where where) {
  // Literal results: Rz90 maps x to y and y to -x, so T*R*S(2) has columns (0,2,0), (-2,0,0).
  const R4 t_r = rows({0, -1, 0, 1}, {1, 0, 0, 2}, {0, 0, 1, 3});
  const R4 t_r_s = rows({0, -2, 0, 1}, {2, 0, 0, 2}, {0, 0, 2, 3});
  const R4 r_s = rows({0, -2, 0, 0}, {2, 0, 0, 0}, {0, 0, 2, 0});
  const R4 t_r_nus = rows({0, -3, 0, 1}, {2, 0, 0, 2}, {0, 0, 0.5, 3});
  const R4 r_nus = rows({0, -3, 0, 0}, {2, 0, 0, 0}, {0, 0, 0.5, 0});
  const R4 t_s = rows({2, 0, 0, 1}, {0, 2, 0, 2}, {0, 0, 2, 3});
  std::vector<RuleCase> out = {
      {"<= Translation", {Tr}, T(1, 2, 3)},
      {"<= Translation * Rotation", {Tr, Rot}, t_r},
      {"<= Translation * Rotation * Scale", {Tr, Rot, Scl}, t_r_s},
      {"<= Rotation", {Rot}, rot(kRz90)},
      {"<= Rotation * Scale", {Rot, Scl}, r_s},
      {"<= Scale", {Scl}, S(2, 2, 2)},
      {"<= Translation * Scale (no rotation)", {Tr, Scl}, t_s},
      {"<= Translation * Rotation * NonUniformScale", {Tr, Rot, Nus}, t_r_nus},
      {"<= Rotation * NonUniformScale", {Rot, Nus}, r_nus},
      {"<= NonUniformScale", {Nus}, S(2, 3, 0.5)},
      {"Scale wins over NonUniformScale: T * R * Scale", {Tr, Rot, Scl, Nus}, t_r_s},
      {"Scale wins over NonUniformScale: Scale alone", {Scl, Nus}, S(2, 2, 2)},
      {"Pivots and PostRotation without composites have no effect",
       {Tr, Rot, PostRot, Rp, Rpt, Sp, Spt}, t_r},
      {"RotationEulerXYZ writes the Rotation it implies",
       {Tr, EulerXYZ}, mul(T(1, 2, 3), rot(kRx90))},
      {"RotationEuler wins over a Rotation quaternion", {Rot, EulerXYZ}, rot(kRx90)},
  };
  for (RuleCase& c : out) {
    c.where = where;
    c.parent = {Tr};  // the parent sits at (1, 2, 3)
    c.parent_world = T(1, 2, 3);
  }
  return out;
}

TEST(ComposeRules, TrsLinesWriteLocalToWorldOfARoot) { run_table(trs_cases(Where::Root)); }

TEST(ComposeRules, TrsLinesWriteLocalToParentOfAnAttachedChild) {
  run_table(trs_cases(Where::Attached));
}

TEST(ComposeRules, ParentNamingAnUnknownEntityIsEvaluatedAsARoot) {
  run_table(trs_cases(Where::UnknownParent));
}

TEST(ComposeRules, RotationIsBuiltFromTheQuaternionAsGivenWithoutNormalizing) {
  // q = (0, 0, 1, 1), |q| = sqrt(2): the unit formula gives 1 - 2(y^2 + z^2) = -1 on the
  // diagonal, 2(xy - wz) = -2 and 2(xy + wz) = 2 off it, 1 - 2(x^2 + y^2) = 1 for z.
  EntityStore store;
  store.create(7);
  store.set_rotation(7, make_quat(0, 0, 1, 1));
  expect_matrix(local_matrix(store, store.slot_of(7), EntityStore::kNoSlot),
                rows({-1, -2, 0, 0}, {2, -1, 0, 0}, {0, 0, 1, 0}));
}

// ---------------------------------------------------------------------------------------------
// No transform source: the user-written LocalToWorld / LocalToParent is kept.
TEST(ComposeRules, UserWrittenMatricesAreKeptWhenNoSourceIsPresent) {
  run_table({
      {"Root, only LocalToWorld: user value kept", {}, kUserLTW},
      {"Root, pivots and PostRotation are not sources", {PostRot, Rp, Rpt, Sp, Spt}, kUserLTW},
      {"Root, ParentScaleInverse is not a source without a Parent", {Psi}, kUserLTW},
      {"Root with an unknown parent, ParentScaleInverse is not a source", {Psi}, kUserLTW,
       Where::UnknownParent, {Scl}},
      {"Attached, only LocalToParent: user value kept", {}, kUserLTP, Where::Attached, {Tr},
       T(1, 2, 3)},
      {"Attached, pivots are not sources", {Rp, Sp}, kUserLTP, Where::Attached, {Tr}, T(1, 2, 3)},
  });
}

TEST(ComposeRules, MissingUserMatricesDefaultToIdentity) {
  const std::vector<RuleCase> table = {
      {"Root without any component", {}, kI},
      {"Attached without any component", {}, kI, Where::Attached, {Tr}, T(1, 2, 3)},
      {"Attached child with only a user LocalToWorld: LocalToParent is identity", {UserLtw}, kI,
       Where::Attached, {Tr}, T(1, 2, 3)},
  };
  for (const RuleCase& c : table) run_case(c, /*with_user_matrices=*/false);
}

// ---------------------------------------------------------------------------------------------
// Euler orders. For order ABC, the turn about A happens first: M = R_C * R_B * R_A. The literal
// matrices were multiplied out by hand from kRx90/kRy90/kRz90 above; an angle of 0 leaves its
// axis out. Three quarter turns give six distinct matrices (one per order), and the pairs pin
// which component of the float3 belongs to which axis.
struct EulerCase {
  EulerOrder order;
  float3 radians;
  R3 expected;
};

const std::vector<EulerCase>& euler_cases() {
  static const std::vector<EulerCase> cases = {
      {EulerOrder::XYZ, {kQuarter, kQuarter, kQuarter}, R3{{{0, 0, 1}, {0, 1, 0}, {-1, 0, 0}}}},
      {EulerOrder::XYZ, {kQuarter, kQuarter, 0}, R3{{{0, 1, 0}, {0, 0, -1}, {-1, 0, 0}}}},
      {EulerOrder::XYZ, {0, kQuarter, kQuarter}, R3{{{0, -1, 0}, {0, 0, 1}, {-1, 0, 0}}}},
      {EulerOrder::XYZ, {kQuarter, 0, kQuarter}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::XZY, {kQuarter, kQuarter, kQuarter}, R3{{{0, 1, 0}, {1, 0, 0}, {0, 0, -1}}}},
      {EulerOrder::XZY, {kQuarter, kQuarter, 0}, R3{{{0, 1, 0}, {0, 0, -1}, {-1, 0, 0}}}},
      {EulerOrder::XZY, {0, kQuarter, kQuarter}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::XZY, {kQuarter, 0, kQuarter}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::YXZ, {kQuarter, kQuarter, kQuarter}, R3{{{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}}}},
      {EulerOrder::YXZ, {kQuarter, kQuarter, 0}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::YXZ, {0, kQuarter, kQuarter}, R3{{{0, -1, 0}, {0, 0, 1}, {-1, 0, 0}}}},
      {EulerOrder::YXZ, {kQuarter, 0, kQuarter}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::YZX, {kQuarter, kQuarter, kQuarter}, R3{{{0, -1, 0}, {1, 0, 0}, {0, 0, 1}}}},
      {EulerOrder::YZX, {kQuarter, kQuarter, 0}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::YZX, {0, kQuarter, kQuarter}, R3{{{0, -1, 0}, {0, 0, 1}, {-1, 0, 0}}}},
      {EulerOrder::YZX, {kQuarter, 0, kQuarter}, R3{{{0, -1, 0}, {0, 0, -1}, {1, 0, 0}}}},
      {EulerOrder::ZXY, {kQuarter, kQuarter, kQuarter}, R3{{{1, 0, 0}, {0, 0, -1}, {0, 1, 0}}}},
      {EulerOrder::ZXY, {kQuarter, kQuarter, 0}, R3{{{0, 1, 0}, {0, 0, -1}, {-1, 0, 0}}}},
      {EulerOrder::ZXY, {0, kQuarter, kQuarter}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::ZXY, {kQuarter, 0, kQuarter}, R3{{{0, -1, 0}, {0, 0, -1}, {1, 0, 0}}}},
      {EulerOrder::ZYX, {kQuarter, kQuarter, kQuarter}, R3{{{0, 0, 1}, {0, -1, 0}, {1, 0, 0}}}},
      {EulerOrder::ZYX, {kQuarter, kQuarter, 0}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::ZYX, {0, kQuarter, kQuarter}, R3{{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}},
      {EulerOrder::ZYX, {kQuarter, 0, kQuarter}, R3{{{0, -1, 0}, {0, 0, -1}, {1, 0, 0}}}},
  };
  return cases;
}

std::string describe(const EulerCase& c) {
  static const char* kNames[] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
  return std::string(kNames[static_cast<int>(c.order)]) + " (" + std::to_string(c.radians.x) +
         ", " + std::to_string(c.radians.y) + ", " + std::to_string(c.radians.z) + ")";
}

TEST(ComposeRules, EachRotationEulerOrderTurnsAboutItsFirstAxisFirst) {
  for (const EulerCase& c : euler_cases()) {
    SCOPED_TRACE(describe(c));
    expect_matrix(rotation_matrix(euler_to_quat(c.order, c.radians)), rot(c.expected));
    // The same through the store: RotationEuler* alone implies the Rotation it writes.
    EntityStore store;
    store.create(1);
    store.set_translation(1, float3(1, 2, 3));
    store.set_rotation_euler(1, c.order, c.radians);
    const uint32_t slot = store.slot_of(1);
    EXPECT_TRUE(has_rotation(store.mask_at(slot)));
    expect_matrix(local_matrix(store, slot, EntityStore::kNoSlot), mul(kT, rot(c.expected)));
  }
}

TEST(ComposeRules, EachPostRotationEulerOrderWritesPostRotationIntoCompositeRotation) {
  for (const EulerCase& c : euler_cases()) {
    SCOPED_TRACE(describe(c));
    EntityStore store;
    store.create(1);
    store.set_matrix(1, MatrixComponent::CompositeRotation, to_glm(kUserCR));
    store.set_post_rotation_euler(1, c.order, c.radians);
    const uint32_t slot = store.slot_of(1);
    EXPECT_TRUE(has_post_rotation(store.mask_at(slot)));
    expect_matrix(composite_rotation(store, slot), rot(c.expected));
    expect_matrix(local_matrix(store, slot, EntityStore::kNoSlot), rot(c.expected));
  }
}

// With several Euler components, the first in XYZ, XZY, YXZ, YZX, ZXY, ZYX order wins. The
// winner carries three quarter turns (whose matrix differs per order); every later order
// carries other angles, and a Rotation / PostRotation quaternion is present too.
TEST(ComposeRules, FirstEulerOrderInPrecedenceWinsWhenSeveralArePresent) {
  const float3 winner(kQuarter, kQuarter, kQuarter);
  const float3 loser(0.1f, 0.7f, -1.3f);
  for (int first = 0; first < kEulerOrderCount; ++first) {
    const EulerCase* expected = nullptr;
    for (const EulerCase& c : euler_cases())
      if (static_cast<int>(c.order) == first && c.radians == winner) expected = &c;
    ASSERT_NE(expected, nullptr);
    SCOPED_TRACE(describe(*expected));

    EntityStore store;
    store.create(1);
    store.set_rotation(1, kQuatRz90);
    store.set_post_rotation(1, kQuatRz90);
    // Set in reverse: the order of setting must not matter.
    for (int o = kEulerOrderCount - 1; o >= first; --o) {
      store.set_rotation_euler(1, static_cast<EulerOrder>(o), o == first ? winner : loser);
      store.set_post_rotation_euler(1, static_cast<EulerOrder>(o), o == first ? winner : loser);
    }
    const uint32_t slot = store.slot_of(1);
    expect_matrix(rotation_matrix(effective_rotation(store, slot)), rot(expected->expected));
    expect_matrix(rotation_matrix(effective_post_rotation(store, slot)), rot(expected->expected));
    // Without CompositeRotation, PostRotation has no effect: local = R.
    expect_matrix(local_matrix(store, slot, EntityStore::kNoSlot), rot(expected->expected));
    // With it, CompositeRotation = R * PR with both Euler-written.
    store.add(1, Component::CompositeRotation);
    const R4 twice = mul(rot(expected->expected), rot(expected->expected));
    expect_matrix(local_matrix(store, slot, EntityStore::kNoSlot), twice);
  }
}

// ---------------------------------------------------------------------------------------------
// CompositeRotation = RotationPivotTranslation * RotationPivot * Rotation * PostRotation *
// RotationPivot^-1. The entity carries CompositeRotation with a user value (kUserCR) that every
// source-bearing line must replace.
TEST(ComposeRules, CompositeRotationLinesCombineTheirSources) {
  run_table({
      {"CR <= RotationPivotTranslation", {CompRot, Rpt}, kRPT},
      {"CR <= RPT * RP * R * RP^-1", {CompRot, Rpt, Rp, Rot}, product({kRPT, kRP, kR, kRPinv})},
      {"CR <= RPT * RP * R * PR * RP^-1", {CompRot, Rpt, Rp, Rot, PostRot},
       product({kRPT, kRP, kR, kPR, kRPinv})},
      {"CR <= RPT * RP * PR * RP^-1",
       {CompRot, Rpt, Rp, PostRot}, product({kRPT, kRP, kPR, kRPinv})},
      {"CR <= RPT * R", {CompRot, Rpt, Rot}, product({kRPT, kR})},
      {"CR <= RPT * R * PR", {CompRot, Rpt, Rot, PostRot}, product({kRPT, kR, kPR})},
      {"CR <= RPT * PR", {CompRot, Rpt, PostRot}, product({kRPT, kPR})},
      {"CR <= RP * R * RP^-1", {CompRot, Rp, Rot}, product({kRP, kR, kRPinv})},
      {"CR <= RP * R * PR * RP^-1", {CompRot, Rp, Rot, PostRot}, product({kRP, kR, kPR, kRPinv})},
      {"CR <= PostRotation", {CompRot, PostRot}, kPR},
      {"CR <= Rotation", {CompRot, Rot}, kR},
      {"CR <= Rotation * PostRotation", {CompRot, Rot, PostRot}, product({kR, kPR})},
      {"CR <= RotationEulerXYZ (an Euler is a Rotation source)", {CompRot, EulerXYZ}, rot(kRx90)},
      // Rotation about the pivot (1,0,0) by Rz90 moves the origin to (1,-1,0): literal check of
      // the pivot algebra itself.
      {"RP * R * RP^-1 turns about the pivot", {CompRot, Rp, Rot},
       rows({0, -1, 0, 1}, {1, 0, 0, -1}, {0, 0, 1, 0})},
      {"RotationPivot alone has no effect: identity replaces the user value", {CompRot, Rp}, kI},
      {"RPT with RP but no rotation: the pivot cancels", {CompRot, Rpt, Rp}, kRPT},
      {"No source: the user-written CompositeRotation is kept", {CompRot}, kUserCR},
      {"No source, ScalePivot is not a rotation source", {CompRot, Sp}, kUserCR},
  });
}

TEST(ComposeRules, CompositeRotationReplacesRotationInTheLocalMatrix) {
  run_table({
      {"<= Translation * CompositeRotation", {Tr, CompRot}, product({kT, kUserCR})},
      {"<= Translation * CompositeRotation * Scale",
       {Tr, CompRot, Scl}, product({kT, kUserCR, kS})},
      {"<= CompositeRotation", {CompRot}, kUserCR},
      {"<= CompositeRotation * Scale", {CompRot, Scl}, product({kUserCR, kS})},
      {"<= Translation * CompositeRotation * NonUniformScale", {Tr, CompRot, Nus},
       product({kT, kUserCR, kNUS})},
      {"<= CompositeRotation * NonUniformScale", {CompRot, Nus}, product({kUserCR, kNUS})},
      {"<= T * CR * Scale with CR from RPT, RP, R, PR (the spec's full example)",
       {Tr, CompRot, Rot, Rpt, Rp, PostRot, Scl},
       product({kT, kRPT, kRP, kR, kPR, kRPinv, kS})},
  });
}

// ---------------------------------------------------------------------------------------------
// CompositeScale = ScalePivotTranslation * ScalePivot * (Scale | NonUniformScale) *
// ScalePivot^-1; the user value kUserCS must be replaced whenever a source is present.
TEST(ComposeRules, CompositeScaleLinesCombineTheirSources) {
  run_table({
      {"CS <= ScalePivotTranslation", {CompScl, Spt}, kSPT},
      {"CS <= SPT * SP * Scale * SP^-1", {CompScl, Spt, Sp, Scl}, product({kSPT, kSP, kS, kSPinv})},
      {"CS <= SPT * Scale", {CompScl, Spt, Scl}, product({kSPT, kS})},
      {"CS <= SP * Scale * SP^-1", {CompScl, Sp, Scl}, product({kSP, kS, kSPinv})},
      {"CS <= Scale", {CompScl, Scl}, kS},
      {"CS <= SPT * SP * NonUniformScale * SP^-1", {CompScl, Spt, Sp, Nus},
       product({kSPT, kSP, kNUS, kSPinv})},
      {"CS <= SPT * NonUniformScale (the spec's repeated 'SPT * Scale' line)", {CompScl, Spt, Nus},
       product({kSPT, kNUS})},
      {"CS <= SP * NonUniformScale * SP^-1", {CompScl, Sp, Nus}, product({kSP, kNUS, kSPinv})},
      {"CS <= NonUniformScale", {CompScl, Nus}, kNUS},
      // Scaling by 2 about (1,1,0) moves the origin to (-1,-1,0): literal check of the algebra.
      {"SP * Scale * SP^-1 scales about the pivot", {CompScl, Sp, Scl},
       rows({2, 0, 0, -1}, {0, 2, 0, -1}, {0, 0, 2, 0})},
      {"Scale wins over NonUniformScale inside CompositeScale", {CompScl, Sp, Scl, Nus},
       product({kSP, kS, kSPinv})},
      {"ScalePivot alone has no effect: identity replaces the user value", {CompScl, Sp}, kI},
      {"No source: the user-written CompositeScale is kept", {CompScl}, kUserCS},
      {"No source, RotationPivot is not a scale source", {CompScl, Rp}, kUserCS},
  });
}

TEST(ComposeRules, CompositeScaleReplacesScaleInTheLocalMatrix) {
  run_table({
      {"<= Translation * Rotation * CompositeScale",
       {Tr, Rot, CompScl}, product({kT, kR, kUserCS})},
      {"<= Rotation * CompositeScale", {Rot, CompScl}, product({kR, kUserCS})},
      {"<= CompositeScale", {CompScl}, kUserCS},
      {"<= Translation * CompositeRotation * CompositeScale", {Tr, CompRot, CompScl},
       product({kT, kUserCR, kUserCS})},
      {"<= CompositeRotation * CompositeScale", {CompRot, CompScl}, product({kUserCR, kUserCS})},
      {"<= T * CR * CS, both from sources (the spec's full example)",
       {Tr, CompRot, Rot, Rpt, Rp, PostRot, CompScl, Scl, Spt, Sp},
       product({kT, kRPT, kRP, kR, kPR, kRPinv, kSPT, kSP, kS, kSPinv})},
  });
}

// ---------------------------------------------------------------------------------------------
// Section 5: LocalToParent lines. The parent carries Scale 2 (world S(2)), so every child with a
// ParentScaleInverse gets S(1/2) written over its user value kUserPSI.
TEST(ComposeRules, LocalToParentLinesWithParentScaleInverse) {
  const R4 psi = S(0.5, 0.5, 0.5);
  std::vector<RuleCase> table = {
      {"<= ParentScaleInverse", {Psi}, psi},
      {"<= Translation * ParentScaleInverse", {Tr, Psi}, product({kT, psi})},
      {"<= T * PSI * Rotation", {Tr, Psi, Rot}, product({kT, psi, kR})},
      {"<= T * PSI * Rotation * NonUniformScale",
       {Tr, Psi, Rot, Nus}, product({kT, psi, kR, kNUS})},
      {"<= T * PSI * CompositeRotation", {Tr, Psi, CompRot}, product({kT, psi, kUserCR})},
      {"<= T * PSI * CompositeRotation * NonUniformScale", {Tr, Psi, CompRot, Nus},
       product({kT, psi, kUserCR, kNUS})},
      {"<= T * PSI * Rotation * Scale", {Tr, Psi, Rot, Scl}, product({kT, psi, kR, kS})},
      {"<= T * PSI * CompositeRotation * Scale", {Tr, Psi, CompRot, Scl},
       product({kT, psi, kUserCR, kS})},
      {"<= T * PSI * Rotation * CompositeScale", {Tr, Psi, Rot, CompScl},
       product({kT, psi, kR, kUserCS})},
      {"<= T * PSI * CompositeRotation * CompositeScale", {Tr, Psi, CompRot, CompScl},
       product({kT, psi, kUserCR, kUserCS})},
      {"<= PSI * Rotation", {Psi, Rot}, product({psi, kR})},
      {"<= PSI * Rotation * NonUniformScale", {Psi, Rot, Nus}, product({psi, kR, kNUS})},
      {"<= PSI * CompositeRotation * NonUniformScale", {Psi, CompRot, Nus},
       product({psi, kUserCR, kNUS})},
      {"<= PSI * Rotation * Scale", {Psi, Rot, Scl}, product({psi, kR, kS})},
      {"<= PSI * CompositeRotation", {Psi, CompRot}, product({psi, kUserCR})},
      {"<= PSI * CompositeRotation * Scale", {Psi, CompRot, Scl}, product({psi, kUserCR, kS})},
      {"<= PSI * Rotation * CompositeScale", {Psi, Rot, CompScl}, product({psi, kR, kUserCS})},
      {"<= PSI * CompositeRotation * CompositeScale", {Psi, CompRot, CompScl},
       product({psi, kUserCR, kUserCS})},
      // The CompositeRotation / CompositeScale lines of Section 5 without PSI.
      {"<= Translation * CompositeRotation", {Tr, CompRot}, product({kT, kUserCR})},
      {"<= Translation * CompositeRotation * Scale",
       {Tr, CompRot, Scl}, product({kT, kUserCR, kS})},
      {"<= Translation * CompositeRotation * NonUniformScale", {Tr, CompRot, Nus},
       product({kT, kUserCR, kNUS})},
      {"<= Translation * CompositeRotation * CompositeScale", {Tr, CompRot, CompScl},
       product({kT, kUserCR, kUserCS})},
      {"<= CompositeRotation", {CompRot}, kUserCR},
      {"<= CompositeRotation * Scale", {CompRot, Scl}, product({kUserCR, kS})},
      {"<= CompositeRotation * NonUniformScale", {CompRot, Nus}, product({kUserCR, kNUS})},
      {"<= CompositeRotation * CompositeScale", {CompRot, CompScl}, product({kUserCR, kUserCS})},
      {"<= Translation * Rotation * CompositeScale",
       {Tr, Rot, CompScl}, product({kT, kR, kUserCS})},
      {"<= Rotation * CompositeScale", {Rot, CompScl}, product({kR, kUserCS})},
      {"<= CompositeScale", {CompScl}, kUserCS},
      {"<= PSI * CompositeScale", {Psi, CompScl}, product({psi, kUserCS})},
      {"Child's full example: T * CR(RPT, RP, R(Euler), PR) * Scale",
       {Tr, CompRot, Rot, EulerXYZ, Rpt, Rp, PostRot, Scl},
       product({kT, kRPT, kRP, rot(kRx90), kPR, kRPinv, kS})},
  };
  for (RuleCase& c : table) {
    c.where = Where::Attached;
    c.parent = {Scl};
    c.parent_world = S(2, 2, 2);
  }
  run_table(table);
}

// ParentScaleInverse is written from the parent: inverse of its CompositeScale, else 1/Scale,
// else 1/NonUniformScale; a parent with none of them leaves the child's user value (kUserPSI).
// The child carries only ParentScaleInverse, so its LocalToParent is exactly that value.
TEST(ComposeRules, ParentScaleInverseIsWrittenFromTheParentsScale) {
  run_table({
      {"PSI <= Scale[Parent]^-1", {Psi}, S(0.5, 0.5, 0.5), Where::Attached, {Scl}, S(2, 2, 2)},
      {"PSI <= NonUniformScale[Parent]^-1", {Psi}, S(0.5, 1.0 / 3.0, 2), Where::Attached, {Nus},
       S(2, 3, 0.5)},
      {"Parent Scale wins over its NonUniformScale", {Psi}, S(0.5, 0.5, 0.5), Where::Attached,
       {Scl, Nus}, S(2, 2, 2)},
      // Parent CS = T(sp) S(2) T(-sp); its inverse T(sp) S(1/2) T(-sp) moves the origin to
      // sp - sp/2 = (0.5, 0.5, 0).
      {"PSI <= CompositeScale[Parent]^-1 (from ScalePivot and Scale)", {Psi},
       rows({0.5, 0, 0, 0.5}, {0, 0.5, 0, 0.5}, {0, 0, 0.5, 0}), Where::Attached,
       {CompScl, Sp, Scl}, product({kSP, kS, kSPinv})},
      // Parent CS = T(spt) S(2): inverse S(1/2) T(-spt), origin to (0, -2, 0). CompositeScale
      // takes precedence over the Scale it is built from.
      {"PSI <= CompositeScale[Parent]^-1 (from ScalePivotTranslation and Scale)", {Psi},
       rows({0.5, 0, 0, 0}, {0, 0.5, 0, -2}, {0, 0, 0.5, 0}), Where::Attached, {CompScl, Spt, Scl},
       product({kSPT, kS})},
      // User CS: x' = 3x, y' = y + 1, z' = 2z; inverse: x = x'/3, y = y' - 1, z = z'/2.
      {"PSI <= inverse of the parent's user-written CompositeScale", {Psi},
       rows({1.0 / 3.0, 0, 0, 0}, {0, 1, 0, -1}, {0, 0, 0.5, 0}), Where::Attached, {CompScl},
       kUserCS},
      {"Parent with no scale component: child's user PSI kept", {Psi}, kUserPSI, Where::Attached,
       {Tr, Rot}, product({kT, kR})},
      {"Parent with no scale, child T * PSI * R: user PSI in the middle", {Tr, Psi, Rot},
       product({kT, kUserPSI, kR}), Where::Attached, {Tr}, kT},
      {"Child without PSI is not compensated", {Tr}, kT, Where::Attached, {Scl}, S(2, 2, 2)},
      {"Unknown parent: PSI is ignored, only Translation", {Tr, Psi}, kT, Where::UnknownParent,
       {Scl}},
  });
  // A child whose PSI component has the default value and whose parent has no scale: identity,
  // and PSI still counts as a source (the user LocalToParent is not used).
  EntityStore store;
  store.create(kParent);
  store.create(kChild);
  store.set_translation(kParent, float3(1, 2, 3));
  store.add(kChild, Component::ParentScaleInverse);
  store.set_matrix(kChild, MatrixComponent::LocalToParent, to_glm(kUserLTP));
  store.set_parent(kChild, kParent);
  EXPECT_FALSE(parent_scale_inverse_from(store, store.slot_of(kParent)).has_value());
  expect_matrix(local_matrix(store, store.slot_of(kChild), store.slot_of(kParent)), kI);
}

TEST(ComposeRules, ParentScaleInverseFromReportsNothingForAParentWithoutScale) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, float3(1, 2, 3));
  store.set_rotation(1, kQuatRz90);
  store.set_pivot(1, PivotComponent::ScalePivot, float3(1, 1, 0));
  EXPECT_FALSE(parent_scale_inverse_from(store, store.slot_of(1)).has_value());
  store.set_non_uniform_scale(1, float3(4, 2, 1));
  const std::optional<float4x4> psi = parent_scale_inverse_from(store, store.slot_of(1));
  ASSERT_TRUE(psi.has_value());
  expect_matrix(*psi, S(0.25, 0.5, 1));
}

}  // namespace
}  // namespace tprop
