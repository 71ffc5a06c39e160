// Randomized scenes against an independent model (double_oracle.h: its own double-precision
// rules, hierarchy and cycle finding, with a first-order error bound per matrix element).
// Several frames of random edits (values, re-parenting, Static on and off, destroy, create)
// check the frame protocol as well.
//
// The test accepts |reference - model| <= 2 * k * u * B: twice the oracle's first-order bound.
// A wrong rule or order changes entries by a sizeable fraction of B, thousands of times over
// this bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "depth_order.h"
#include "double_oracle.h"
#include "entity_store.h"
#include "reference.h"

namespace tprop {
namespace {

using namespace double_oracle;

// ---------------------------------------------------------------------------------------------
// Random scenes, written into the store and the model together.
class SceneWriter {
 public:
  SceneWriter(uint32_t seed, EntityStore& store, Model& model)
      : rng_(seed), store_(store), model_(model) {}

  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  float3 vec(float lo, float hi) {
    return float3(uniform(lo, hi), uniform(lo, hi), uniform(lo, hi));
  }
  quat random_quat() {
    float4 v;
    do v = float4(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
    while (glm::length(v) < 0.1f);
    v = glm::normalize(v);
    if (chance(0.1)) v *= uniform(0.98f, 1.02f);  // slightly off unit: used as given
    return make_quat(v.x, v.y, v.z, v.w);
  }
  float4x4 random_affine(float translation) {
    float4x4 m(1.0f);
    const quat q = random_quat();
    // Columns of a rotation-like block scaled per axis, plus a translation.
    const float3 s = vec(0.5f, 2.0f);
    const float4x4 r = glm::mat4_cast(q);
    for (int c = 0; c < 3; ++c) m[c] = r[c] * s[c];
    m[3] = float4(vec(-translation, translation), 1.0f);
    return m;
  }
  float4x4 random_composite_scale() {
    float4x4 m(1.0f);
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) m[c][r] = r == c ? uniform(0.5f, 2.0f) : uniform(-0.2f, 0.2f);
    m[3] = float4(vec(-3, 3), 1.0f);
    return m;
  }

  static double d(float v) { return v; }
  static V3 d(float3 v) { return V3{v.x, v.y, v.z}; }
  static Q d(quat q) { return Q{q.x, q.y, q.z, q.w}; }
  static M4 d(const float4x4& m) {
    M4 out;
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) out[r][c] = m[c][r];
    return out;
  }
  // Records a float value in the model (widened to double) and hands it on to the store.
  template <class Float, class Double>
  static const Float& keep(std::optional<Double>& slot, const Float& value) {
    slot = d(value);
    return value;
  }

  // --- edits applied to both ---
  void set_translation(EntityId id, float3 v) {
    store_.set_translation(id, keep(model_.entities[id].translation, v));
  }
  void set_rotation(EntityId id, quat q) {
    store_.set_rotation(id, keep(model_.entities[id].rotation, q));
  }
  void set_scale(EntityId id, float s) {
    store_.set_scale(id, keep(model_.entities[id].uniform_scale, s));
  }
  void set_euler(EntityId id, int order, float3 v) {
    store_.set_rotation_euler(id, static_cast<EulerOrder>(order),
                              keep(model_.entities[id].rotation_euler[order], v));
  }
  void remove_euler(EntityId id, int order) {
    store_.remove(id, rotation_euler(static_cast<EulerOrder>(order)));
    model_.entities[id].rotation_euler[order].reset();
  }
  void set_parent(EntityId id, EntityId parent) {
    store_.set_parent(id, parent);
    model_.entities[id].parent = parent;
  }
  void remove_parent(EntityId id) {
    store_.remove(id, Component::Parent);
    model_.entities[id].parent.reset();
  }
  // Adding Static to an entity that has it changes nothing; any real change starts unbaked.
  void set_static(EntityId id, bool on) {
    Entity& e = model_.entities[id];
    if (on == e.is_static) return;
    if (on) store_.add(id, Component::Static);
    else store_.remove(id, Component::Static);
    e.is_static = on;
    e.baked = false;
    e.frozen.reset();
  }
  void set_user_ltw(EntityId id, const float4x4& m) {
    store_.set_matrix(id, MatrixComponent::LocalToWorld,
                      keep(model_.entities[id].local_to_world, m));
  }
  void destroy(EntityId id) {
    store_.destroy(id);
    model_.entities.erase(id);
    // Unity's ParentSystem, as the spec says: children of a destroyed parent lose their Parent.
    for (auto& [other, e] : model_.entities)
      if (e.parent == id) e.parent.reset();
  }

  // A new entity with a random component mix; `sparse` makes each component rarer, so that
  // entities with no transform source (user LocalToWorld / LocalToParent kept) occur often.
  void create(EntityId id, bool sparse) {
    store_.create(id);
    Entity& e = model_.entities[id];
    e = Entity{};
    const double f = sparse ? 0.25 : 1.0;
    if (chance(0.6 * f)) set_translation(id, vec(-10, 10));
    if (chance(0.5 * f)) set_rotation(id, random_quat());
    if (chance(0.3 * f)) set_scale(id, uniform(0.5f, 2.0f));
    if (chance(0.3 * f))
      store_.set_non_uniform_scale(id, keep(e.non_uniform_scale, vec(0.5f, 2.0f)));
    for (int o = 0; o < 6; ++o)
      if (chance(0.12 * f)) set_euler(id, o, vec(-3.14159f, 3.14159f));
    if (chance(0.3 * f)) store_.set_post_rotation(id, keep(e.post_rotation, random_quat()));
    for (int o = 0; o < 6; ++o)
      if (chance(0.1 * f))
        store_.set_post_rotation_euler(id, static_cast<EulerOrder>(o),
                                       keep(e.post_rotation_euler[o], vec(-3.14159f, 3.14159f)));
    std::optional<V3>* pivots[4] = {&e.rotation_pivot, &e.rotation_pivot_translation,
                                    &e.scale_pivot, &e.scale_pivot_translation};
    for (int p = 0; p < 4; ++p)
      if (chance(0.3))
        store_.set_pivot(id, static_cast<PivotComponent>(p), keep(*pivots[p], vec(-5, 5)));
    using MC = MatrixComponent;
    if (chance(0.3))
      store_.set_matrix(id, MC::CompositeRotation, keep(e.composite_rotation, random_affine(5)));
    if (chance(0.3))
      store_.set_matrix(id, MC::CompositeScale, keep(e.composite_scale, random_composite_scale()));
    if (chance(0.3))
      store_.set_matrix(id, MC::ParentScaleInverse,
                        keep(e.parent_scale_inverse, scale_matrix(vec(0.5f, 2.0f))));
    if (chance(0.3))
      store_.set_matrix(id, MC::LocalToParent, keep(e.local_to_parent, random_affine(5)));
    if (chance(0.3)) set_user_ltw(id, random_affine(5));
    if (chance(0.05)) set_static(id, true);
    if (chance(0.03)) {
      store_.add(id, Component::WriteGroupOverride);
      e.override_ltw = true;
    }
  }

 private:
  std::mt19937 rng_;
  EntityStore& store_;
  Model& model_;
};

// ---------------------------------------------------------------------------------------------
struct Comparison {
  double worst_ratio = 0;  // max over entries of |reference - model| / (k * u * B)
  size_t compared = 0;
};

void compare(const EntityStore& store, const DepthOrder& order, const std::vector<float4x4>& world,
             const Model& model, Comparison& stats) {
  constexpr double kUnitRoundoff = 1.0 / (1 << 24);
  ASSERT_EQ(order.size(), model.entities.size());
  for (uint32_t pos = 0; pos < order.size(); ++pos) {
    const EntityId id = store.id_at(order.slot[pos]);
    const Bounded& want = model.world(id);
    ++stats.compared;
    for (int r = 0; r < 4; ++r) {
      for (int c = 0; c < 4; ++c) {
        const double err = std::abs(static_cast<double>(world[pos][c][r]) - want.v[r][c]);
        const double bound = want.k * kUnitRoundoff * want.b[r][c];
        if (bound > 0) stats.worst_ratio = std::max(stats.worst_ratio, err / bound);
        if (err > 2 * bound) {
          ADD_FAILURE() << "entity " << id << " row " << r << " column " << c << ": reference "
                        << world[pos][c][r] << ", model " << want.v[r][c] << ", allowed "
                        << 2 * bound;
          return;  // one report per frame is enough to debug from
        }
      }
    }
  }
}

// Builds a scene of `count` entities: chains, bushes, unknown parents, cycles of length 1 to 4
// with entities hanging below them, every component mix; then runs `frames` frames of random
// edits, comparing every entity every frame.
double run_random_scene(uint32_t seed, uint32_t count, int frames) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  EntityStore store;
  Model model;
  SceneWriter w(seed, store, model);

  // Ids with gaps, created in shuffled order so that slots do not follow the hierarchy.
  std::vector<EntityId> ids(count);
  for (uint32_t i = 0; i < count; ++i) ids[i] = 7 + 3 * i;
  std::vector<uint32_t> creation(count);
  for (uint32_t i = 0; i < count; ++i) creation[i] = i;
  std::shuffle(creation.begin(), creation.end(), std::mt19937(seed + 1));
  for (uint32_t i : creation) w.create(ids[i], w.chance(0.2));

  // Parents: index i hangs below an earlier index (often i - 1, for chains), depth at most 24.
  std::vector<int> depth(count, 0);
  for (uint32_t i = 1; i < count; ++i) {
    if (w.chance(0.12)) continue;  // a root
    if (w.chance(0.03)) {
      w.set_parent(ids[i], 5'000'000 + i);  // names no entity
      continue;
    }
    const uint32_t j = w.chance(0.5) ? i - 1 : static_cast<uint32_t>(w.pick(i));
    if (depth[j] >= 24) continue;
    depth[i] = depth[j] + 1;
    w.set_parent(ids[i], ids[j]);
  }
  // Rings of 1..4 distinct entities; everything that hung below them keeps its parent.
  std::unordered_set<uint32_t> in_ring;
  for (int ring = 0; ring < 16; ++ring) {
    const int size = 1 + ring % 4;
    std::vector<uint32_t> members;
    while (static_cast<int>(members.size()) < size) {
      const uint32_t m = static_cast<uint32_t>(w.pick(count));
      if (in_ring.insert(m).second) members.push_back(m);
    }
    for (int k = 0; k < size; ++k) w.set_parent(ids[members[k]], ids[members[(k + 1) % size]]);
  }

  CpuReference reference;
  DepthOrder order;
  std::vector<float4x4> world;
  Comparison stats;
  EntityId next_id = 1'000'000;
  for (int frame = 0; frame < frames; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    const StoreChanges changes = store.take_changes();
    if (changes.hierarchy || frame == 0) order = sort_by_depth(store);
    if (frame == 0 && count >= 1000) {
      EXPECT_GE(order.cycles_broken, 16u);
      EXPECT_GE(order.unknown_parents, 1u);
      EXPECT_GE(order.level_count(), 10u);
    }
    reference.evaluate(store, order, world);
    model.evaluate();
    compare(store, order, world, model, stats);
    store.mark_statics_baked();
    model.end_frame();

    // Random edits for the next frame, on about a tenth of the entities.
    std::vector<EntityId> live;
    for (const auto& [id, e] : model.entities) live.push_back(id);
    std::sort(live.begin(), live.end());  // unordered_map order is not reproducible
    const size_t edits = live.size() / 10;
    for (size_t n = 0; n < edits; ++n) {
      const EntityId id = live[w.pick(live.size())];
      if (!model.entities.count(id)) continue;  // destroyed earlier in this batch
      switch (w.pick(10)) {
        case 0: w.set_translation(id, w.vec(-10, 10)); break;
        case 1: w.set_rotation(id, w.random_quat()); break;
        case 2: w.set_scale(id, w.uniform(0.5f, 2.0f)); break;
        case 3: w.set_euler(id, static_cast<int>(w.pick(6)), w.vec(-3, 3)); break;
        case 4: w.remove_euler(id, static_cast<int>(w.pick(6))); break;
        case 5: {
          const EntityId p = live[w.pick(live.size())];
          if (model.entities.count(p)) w.set_parent(id, p);  // may close new cycles
          break;
        }
        case 6: w.remove_parent(id); break;
        case 7: w.set_static(id, !model.entities[id].is_static); break;
        case 8: w.set_user_ltw(id, w.random_affine(5)); break;
        case 9:
          if (w.chance(0.5)) {
            w.destroy(id);
          } else {
            w.create(next_id, false);
            w.set_parent(next_id, id);
            ++next_id;
          }
          break;
      }
    }
  }
  EXPECT_GT(stats.compared, static_cast<size_t>(count) * frames / 2);
  return stats.worst_ratio;
}

// The bound is first order; the recorded ratio (x1000, in the XML report) shows how much of it
// the reference actually uses: about 0.4 when this test was written.
void record_worst_ratio(double ratio) {
  ::testing::Test::RecordProperty("worst_error_to_bound_ratio_x1000",
                                  static_cast<int>(std::lround(ratio * 1000)));
}

TEST(RandomScene, ReferenceMatchesAnIndependentDoubleModelOverSeveralFrames) {
  double worst = 0;
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u})
    worst = std::max(worst, run_random_scene(seed, 4000, 4));
  record_worst_ratio(worst);
}

TEST(RandomScene, SmallDenseScenesWithManyCyclesMatchTheModel) {
  // Few entities and the same 16 rings: most of the scene sits on or below a cycle.
  double worst = 0;
  for (uint32_t seed = 100; seed < 140; ++seed)
    worst = std::max(worst, run_random_scene(seed, 60, 6));
  record_worst_ratio(worst);
}

}  // namespace
}  // namespace tprop
