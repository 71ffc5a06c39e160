// Shared by the gpu_tests binary: one validated Vulkan context for the whole binary, the
// fixture that skips (or, with TPROP_REQUIRE_GPU=1 as in CI, fails) without a device and fails
// on any validation error or warning, and the GPU-versus-CpuReference comparison.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compare.h"
#include "depth_order.h"
#include "entity_store.h"
#include "propagator.h"
#include "reference.h"
#include "vk_context.h"

namespace tprop::test {

inline bool gpu_required() {
  const char* v = std::getenv("TPROP_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

// Created once: VK_LAYER_KHRONOS_validation with synchronization validation on.
struct SharedContext {
  std::unique_ptr<VulkanContext> context;
  std::string error;
};

inline SharedContext& shared_context() {
  static SharedContext shared = [] {
    SharedContext s;
    auto ctx = VulkanContext::create_headless({.validation = true});
    if (ctx) {
      s.context = std::make_unique<VulkanContext>(std::move(*ctx));
    } else {
      s.error = ctx.error().message;
    }
    return s;
  }();
  return shared;
}

// Without a device: skip with the reason, or fail when TPROP_REQUIRE_GPU=1. Every test ends by
// asserting that the validation layer reported nothing.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SharedContext& s = shared_context();
    if (!s.context) {
      if (gpu_required()) FAIL() << "TPROP_REQUIRE_GPU=1 but no Vulkan device: " << s.error;
      GTEST_SKIP() << "no usable Vulkan device with validation layers (" << s.error
                   << "); set TPROP_REQUIRE_GPU=1 to make this a failure";
    }
    ctx_ = s.context.get();
    before_ = ctx_->validation_counts();
  }
  void TearDown() override {
    if (!ctx_) return;
    const ValidationCounts after = ctx_->validation_counts();
    EXPECT_EQ(after.errors, before_.errors) << "Vulkan validation errors (printed above)";
    EXPECT_EQ(after.warnings, before_.warnings) << "Vulkan validation warnings (printed above)";
  }
  VulkanContext& ctx() { return *ctx_; }

  VulkanContext* ctx_ = nullptr;
  ValidationCounts before_;
};

// A chain of n entities (ids 0..n-1, each the child of the one before), each one unit along x
// from its parent: at depth d the world x is exactly d + 1 in float, so a walk cut short anywhere
// shows as a wrong integer.
inline EntityStore unit_step_chain(uint32_t n) {
  EntityStore store;
  store.reserve(n);
  for (EntityId id = 0; id < n; ++id) {
    store.create(id);
    store.set_translation(id, float3(1, 0, 0));
    if (id > 0) store.set_parent(id, id - 1);
  }
  return store;
}

// The tolerance model and its justification live in hierarchy/compare.h (the CLI's --validate
// judges by the same one).
inline float tolerance(const float4x4& reference, uint32_t level) {
  return local_to_world_tolerance(reference, level);
}

// The GPU's LocalToWorld of entity `id` after the last frame (read back whole).
inline float4x4 world_of(Propagator& gpu, const EntityStore& store, EntityId id) {
  auto all = gpu.read_back();
  EXPECT_TRUE(all.ok());
  return all.ok() ? (*all)[store.slot_of(id)] : float4x4(0.0f);
}

// One frame on both backends, as the frame protocol says (the reference evaluates before the
// GPU's run() marks Statics baked), then compares every LocalToWorld. Returns the worst error
// relative to its tolerance (<= 1 passes). `gpu_frame`, where given, runs the GPU's frame
// instead of gpu.run(store) (and marks the Statics baked as run() does).
inline double frame_and_compare(Propagator& gpu, CpuReference& cpu, EntityStore& store,
                                const char* what,
                                const std::function<Status()>& gpu_frame = {}) {
  const DepthOrder order = sort_by_depth(store);
  std::vector<float4x4> expected;
  cpu.evaluate(store, order, expected);
  const Status st = gpu_frame ? gpu_frame() : gpu.run(store);
  EXPECT_TRUE(st.ok()) << what << ": " << (st.ok() ? "" : st.error().message);
  if (!st.ok()) return 1e30;
  const std::vector<uint32_t> level = levels_of(order);
  // The order the GPU keeps edit by edit attaches every entity as the from-scratch sort does,
  // below its parent's level, and at the sort's level once nothing is queued for compaction.
  int misplaced = 0;
  const LevelOrder& kept = gpu.order();
  const bool exact = kept.slack_queued() == 0;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const uint32_t slot = order.slot[pos];
    const uint32_t parent = order.attached(pos) ? order.slot[order.parent[pos]] : LevelOrder::kNone;
    const bool attached_alike = kept.parent_of(slot) == parent;
    const bool below = parent == LevelOrder::kNone || kept.level_of(slot) > kept.level_of(parent);
    const bool level_alike = !exact || kept.level_of(slot) == level[pos];
    if ((!attached_alike || !below || !level_alike) && misplaced++ < 4)
      ADD_FAILURE() << what << ": entity " << store.id_at(slot) << " at level "
                    << kept.level_of(slot) << " on the GPU below slot " << kept.parent_of(slot)
                    << ", at level " << level[pos] << " below slot " << parent << " in the sort";
  }
  auto by_slot = gpu.read_back();
  EXPECT_TRUE(by_slot.ok()) << what;
  if (!by_slot.ok()) return 1e30;
  EXPECT_EQ(by_slot->size(), store.slot_capacity()) << what << ": one LocalToWorld per slot";
  // A slot without an entity reads as all zeros.
  for (uint32_t s = 0; s < by_slot->size(); ++s)
    if (!store.alive_at(s)) {
      EXPECT_EQ((*by_slot)[s], float4x4(0.0f)) << what << ": dead slot " << s;
    }
  std::vector<float4x4> in_order(order.size());
  for (size_t pos = 0; pos < order.size() && order.slot[pos] < by_slot->size(); ++pos)
    in_order[pos] = (*by_slot)[order.slot[pos]];
  const std::vector<float4x4>* got = &in_order;
  double worst = 0.0;
  int reported = 0;
  for (size_t pos = 0; pos < expected.size() && pos < got->size(); ++pos) {
    const float tol = tolerance(expected[pos], level[pos]);
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) {
        const float e = expected[pos][c][r], g = (*got)[pos][c][r];
        const double err = (std::isnan(e) && std::isnan(g)) ? 0.0 : std::fabs(double(e) - g) / tol;
        if (!(err <= 1.0) && reported++ < 8)
          ADD_FAILURE() << what << ": entity " << store.id_at(order.slot[pos]) << " (position "
                        << pos << ", level " << level[pos] << ") element [" << c << "][" << r
                        << "] GPU " << g << " vs reference " << e << " (tolerance " << tol << ")";
        if (err > worst || std::isnan(err)) worst = std::isnan(err) ? 1e30 : err;
      }
  }
  return worst;
}

}  // namespace tprop::test

#include <random>

namespace tprop::test {

// Values for the component-mix scenes: bounded (translations within 5 units, scales in
// [0.8, 1.25], user matrices rigid-plus-scale) so that depth-64 products stay well scaled.
class ValueSource {
 public:
  explicit ValueSource(uint64_t seed) : rng_(seed) {}
  // std::uniform_real_distribution<float>(lo, hi)(rng_) as libstdc++ computes it (one 64-bit
  // draw scaled by 2^-64, kept below 1), so every seed's scene stays what it was, without the
  // long double logarithm its generate_canonical takes on every draw: at the sanitizer tree's
  // -O2 that was a tenth of the million-entity test's time.
  float uniform(float lo, float hi) {
    float c = float(rng_()) * 0x1p-64f;
    if (c >= 1.0f) c = std::nextafter(1.0f, 0.0f);
    return c * (hi - lo) + lo;
  }
  uint32_t below(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  float3 vec(float r) { return float3(uniform(-r, r), uniform(-r, r), uniform(-r, r)); }
  quat unit_quat() {
    float4 v(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
    if (glm::length(v) < 1e-3f) v = float4(0, 0, 0, 1);
    v = glm::normalize(v);
    return make_quat(v.x, v.y, v.z, v.w);
  }
  float scale() { return uniform(0.8f, 1.25f); }
  float3 scale3() { return float3(scale(), scale(), scale()); }
  float4x4 affine() {
    return translation_matrix(vec(5)) * rotation_matrix(unit_quat()) * scale_matrix(scale3());
  }
  // A matrix with a last row other than (0, 0, 0, 1), kept near the identity so that products
  // through the hierarchy stay well scaled.
  float4x4 projective() {
    float4x4 m = affine();
    m[0][3] = uniform(-0.05f, 0.05f);
    m[1][3] = uniform(-0.05f, 0.05f);
    m[2][3] = uniform(-0.05f, 0.05f);
    m[3][3] = uniform(0.9f, 1.1f);
    return m;
  }

 private:
  std::mt19937_64 rng_;
};

// The features a component-mix entity may carry, one bit each.
enum Feature : uint32_t {
  kTranslation = 1u << 0,
  kRotation = 1u << 1,
  kEuler = 1u << 2,           // one RotationEuler* (two when kRotation is set too: precedence)
  kScale = 1u << 3,
  kNonUniformScale = 1u << 4,
  kCompositeRotation = 1u << 5,
  kRotationPivots = 1u << 6,  // RotationPivot + RotationPivotTranslation
  kPostRotation = 1u << 7,    // PostRotation, or a PostRotationEuler* with kEuler
  kCompositeScale = 1u << 8,
  kScalePivots = 1u << 9,     // ScalePivot + ScalePivotTranslation
  kParentScaleInverse = 1u << 10,
  kLocalToParent = 1u << 11,
  kLocalToWorld = 1u << 12,
  kOverride = 1u << 13,
  kStatic = 1u << 14,
  kFeatureBits = 15,
};

inline void add_features(EntityStore& store, EntityId e, uint32_t f, ValueSource& v) {
  const EulerOrder order = static_cast<EulerOrder>(v.below(kEulerOrderCount));
  if (f & kTranslation) store.set_translation(e, v.vec(5));
  if (f & kRotation) store.set_rotation(e, v.unit_quat());
  if (f & kEuler) {
    store.set_rotation_euler(e, order, v.vec(3.1f));
    // A second, lower-precedence Euler component that must lose.
    if ((f & kRotation) && order != EulerOrder::ZYX)
      store.set_rotation_euler(e, EulerOrder::ZYX, v.vec(3.1f));
  }
  if (f & kScale) store.set_scale(e, v.scale());
  if (f & kNonUniformScale) store.set_non_uniform_scale(e, v.scale3());
  if (f & kCompositeRotation) store.set_matrix(e, MatrixComponent::CompositeRotation, v.affine());
  if (f & kRotationPivots) {
    store.set_pivot(e, PivotComponent::RotationPivot, v.vec(2));
    store.set_pivot(e, PivotComponent::RotationPivotTranslation, v.vec(2));
  }
  if (f & kPostRotation) {
    if (f & kEuler) {
      store.set_post_rotation_euler(e, order, v.vec(3.1f));
    } else {
      store.set_post_rotation(e, v.unit_quat());
    }
  }
  if (f & kCompositeScale) store.set_matrix(e, MatrixComponent::CompositeScale, v.affine());
  if (f & kScalePivots) {
    store.set_pivot(e, PivotComponent::ScalePivot, v.vec(2));
    store.set_pivot(e, PivotComponent::ScalePivotTranslation, v.vec(2));
  }
  if (f & kParentScaleInverse) store.set_matrix(e, MatrixComponent::ParentScaleInverse, v.affine());
  if (f & kLocalToParent) store.set_matrix(e, MatrixComponent::LocalToParent, v.affine());
  if (f & kLocalToWorld) store.set_matrix(e, MatrixComponent::LocalToWorld, v.affine());
  if (f & kOverride) store.add(e, Component::WriteGroupOverride);
  if (f & kStatic) store.add(e, Component::Static);
}

// A random feature mask: the common components often, the rare ones now and then, so that
// every combination turns up in a large scene.
inline uint32_t random_features(ValueSource& v) {
  uint32_t f = 0;
  if (v.below(10) < 8) f |= kTranslation;
  if (v.below(10) < 5) f |= kRotation;
  if (v.below(10) < 2) f |= kEuler;
  if (v.below(10) < 3) f |= kScale;
  for (uint32_t bit = 4; bit < kFeatureBits; ++bit)
    if (v.below(100) < 6) f |= 1u << bit;
  return f;
}

// n entities with ids 0..n-1, each under a random earlier entity (mostly a recent one, so that
// chains reach max_depth) or at the root; depth never beyond max_depth.
inline void build_random_scene(EntityStore& store, uint32_t n, uint32_t max_depth, ValueSource& v) {
  store.reserve(n);
  std::vector<uint32_t> depth(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    store.create(i);
    add_features(store, i, random_features(v), v);
    if (i == 0 || v.below(100) < 3) continue;
    const uint32_t window = std::min<uint32_t>(i, v.below(2) ? 4 : 5000);
    const uint32_t parent = i - 1 - v.below(window);
    if (depth[parent] + 1 >= max_depth) continue;
    depth[i] = depth[parent] + 1;
    store.set_parent(i, parent);
  }
}

// One frame of random edits of every kind (values, spawns, despawns, re-parents, cycles,
// unknown parents, Static and override toggles); returns how many entities were created so far
// (ids 0..next-1).
inline EntityId mixed_edit_frame(EntityStore& store, EntityId next, ValueSource& v) {
  auto any = [&] { return static_cast<EntityId>(v.below(next + next / 16)); };  // some unknown
  for (uint32_t k = v.below(40); k > 0; --k) {
    const EntityId e = any();
    store.set_translation(e, v.vec(5));
    if (k % 4 == 0) add_features(store, e, random_features(v) & ~(kStatic | kOverride), v);
  }
  for (uint32_t k = v.below(8); k > 0; --k) {
    const EntityId e = next++;
    store.create(e);
    add_features(store, e, random_features(v) & ~kOverride, v);
    if (v.below(4)) store.set_parent(e, any());
  }
  for (uint32_t k = v.below(6); k > 0; --k) store.destroy(any());
  for (uint32_t k = v.below(6); k > 0; --k) store.set_parent(any(), any());  // cycles too
  if (v.below(4) == 0) store.set_parent(any(), any());
  for (uint32_t k = v.below(3); k > 0; --k) store.remove(any(), Component::Parent);
  for (uint32_t k = v.below(3); k > 0; --k) {
    const EntityId e = any();
    if (store.has(e, Component::Static)) {
      store.remove(e, Component::Static);
    } else {
      store.add(e, Component::Static);
    }
  }
  if (v.below(5) == 0) {
    const EntityId e = any();
    if (store.has(e, Component::WriteGroupOverride)) {
      store.remove(e, Component::WriteGroupOverride);
    } else {
      store.add(e, Component::WriteGroupOverride);
    }
  }
  return next;
}

inline Propagator make_propagator(VulkanContext& ctx, const PropagatorOptions& options = {}) {
  auto p = Propagator::create(ctx, options);
  if (!p) {
    ADD_FAILURE() << p.error().message;
    std::abort();
  }
  return std::move(*p);
}

}  // namespace tprop::test
