// Randomized scenes against an independent model. The model below keeps its own copy of every
// entity's components (what the test wrote into the store), and evaluates LocalToWorld in double
// precision with its own quaternion, Euler, matrix and inverse code, recursing over the parent
// chain with memoization and finding cycles by itself. It shares nothing with compose.cpp,
// reference.cpp or depth_order.cpp. Several frames of random edits (values, re-parenting,
// Static on and off, destroy, create) check the frame protocol as well.
//
// Tolerance: the model carries, next to each matrix, a componentwise error bound in the usual
// first-order form |float - exact| <= k * u * B, where u = 2^-24 is float's unit roundoff, B is
// the product of the entrywise absolute values of every factor that went into the matrix (so
// cancellation, e.g. about a pivot, cannot hide error), and k counts the roundings: a 4x4
// product adds 4 (gamma_4) to the sum of its operands' k; a rotation matrix from a float
// quaternion starts at 8 (16 when the quaternion came from Euler angles) with B >= |q|^2 on its
// 3x3 block; a float reciprocal at 1; a 4x4
// inverse at k(A) + 32 with B = |A^-1| B(A) |A^-1| (first-order perturbation of the inverse).
// The test accepts |reference - model| <= 2 * k * u * B: twice the first-order bound. A wrong
// rule or order changes entries by a sizeable fraction of B, thousands of times over this bound.
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
#include "entity_store.h"
#include "reference.h"

namespace tprop {
namespace {

// ---------------------------------------------------------------------------------------------
// The model's own double-precision math.
using M4 = std::array<std::array<double, 4>, 4>;  // row-major
struct Q { double x, y, z, w; };
struct V3 { double x, y, z; };

M4 identity() { return M4{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}}; }
M4 translate(V3 v) { return M4{{{1, 0, 0, v.x}, {0, 1, 0, v.y}, {0, 0, 1, v.z}, {0, 0, 0, 1}}}; }
M4 scale(V3 v) { return M4{{{v.x, 0, 0, 0}, {0, v.y, 0, 0}, {0, 0, v.z, 0}, {0, 0, 0, 1}}}; }
M4 multiply(const M4& a, const M4& b) {
  M4 out{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) out[i][j] += a[i][k] * b[k][j];
  return out;
}
M4 absolute(const M4& a) {
  M4 out;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) out[i][j] = std::abs(a[i][j]);
  return out;
}
// Gauss-Jordan with partial pivoting.
M4 inverse(M4 a) {
  M4 inv = identity();
  for (int col = 0; col < 4; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 4; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    std::swap(a[col], a[pivot]);
    std::swap(inv[col], inv[pivot]);
    const double d = a[col][col];
    for (int j = 0; j < 4; ++j) {
      a[col][j] /= d;
      inv[col][j] /= d;
    }
    for (int r = 0; r < 4; ++r) {
      if (r == col) continue;
      const double f = a[r][col];
      for (int j = 0; j < 4; ++j) {
        a[r][j] -= f * a[col][j];
        inv[r][j] -= f * inv[col][j];
      }
    }
  }
  return inv;
}
// Hamilton product: (a * b) turns by b first.
Q qmul(Q a, Q b) {
  return Q{a.w * b.x + b.w * a.x + (a.y * b.z - a.z * b.y),
           a.w * b.y + b.w * a.y + (a.z * b.x - a.x * b.z),
           a.w * b.z + b.w * a.z + (a.x * b.y - a.y * b.x),
           a.w * b.w - (a.x * b.x + a.y * b.y + a.z * b.z)};
}
// The unit-quaternion formula applied as given (no normalization), row-major.
M4 rotate(Q q) {
  const double x = q.x, y = q.y, z = q.z, w = q.w;
  M4 m = identity();
  m[0] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 0};
  m[1] = {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 0};
  m[2] = {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), 0};
  return m;
}
// Euler order index 0..5 = XYZ, XZY, YXZ, YZX, ZXY, ZYX: the first letter turns first.
Q euler(int order, V3 angles) {
  static const char* kOrders[] = {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"};
  Q q{0, 0, 0, 1};
  for (const char* axis = kOrders[order]; *axis; ++axis) {
    const double a = *axis == 'X' ? angles.x : *axis == 'Y' ? angles.y : angles.z;
    const double s = std::sin(a / 2), c = std::cos(a / 2);
    const Q turn{*axis == 'X' ? s : 0, *axis == 'Y' ? s : 0, *axis == 'Z' ? s : 0, c};
    q = qmul(turn, q);  // later axes multiply on the left
  }
  return q;
}

// A matrix with its error bound (see the header comment).
struct Bounded {
  M4 v;
  M4 b;
  double k;
};
Bounded exact(const M4& m) { return Bounded{m, absolute(m), 0}; }
Bounded rounded(const M4& m, double k) { return Bounded{m, absolute(m), k}; }
Bounded operator*(const Bounded& a, const Bounded& b) {
  return Bounded{multiply(a.v, b.v), multiply(a.b, b.b), a.k + b.k + 4};
}
Bounded rotation_factor(Q q, double k) {
  Bounded r = rounded(rotate(q), k);
  const double n2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.b[i][j] = std::max(r.b[i][j], n2);
  return r;
}
Bounded inverse_factor(const Bounded& a) {
  const M4 inv = inverse(a.v);
  return Bounded{inv, multiply(multiply(absolute(inv), a.b), absolute(inv)), a.k + 32};
}

// ---------------------------------------------------------------------------------------------
// The model's entity: exactly the values written into the store (floats, widened to double).
struct Entity {
  std::optional<V3> translation;
  std::optional<Q> rotation;
  std::optional<double> uniform_scale;
  std::optional<V3> non_uniform_scale;
  std::optional<V3> rotation_euler[6];
  std::optional<Q> post_rotation;
  std::optional<V3> post_rotation_euler[6];
  std::optional<V3> rotation_pivot, rotation_pivot_translation, scale_pivot,
      scale_pivot_translation;
  std::optional<M4> composite_rotation, composite_scale, parent_scale_inverse, local_to_parent,
      local_to_world;
  std::optional<EntityId> parent;
  bool is_static = false;
  bool baked = false;  // the store's static_baked flag, mirrored
  std::optional<Bounded> frozen;
  bool override_ltw = false;
};

class Model {
 public:
  std::unordered_map<EntityId, Entity> entities;

  // --- the rules, written from NOTES.md ---
  std::optional<Q> rotation_of(const Entity& e) const {
    for (int o = 0; o < 6; ++o)
      if (e.rotation_euler[o]) return euler(o, *e.rotation_euler[o]);
    return e.rotation;
  }
  // Roundings in the float rotation matrix: 8 from a stored quaternion (the matrix formula), 16
  // from an Euler (three rounded axis quaternions and two float Hamilton products before it).
  static double rotation_k(const std::optional<V3> (&eulers)[6]) {
    return std::any_of(eulers, eulers + 6, [](const auto& v) { return v.has_value(); }) ? 16 : 8;
  }
  std::optional<Q> post_rotation_of(const Entity& e) const {
    for (int o = 0; o < 6; ++o)
      if (e.post_rotation_euler[o]) return euler(o, *e.post_rotation_euler[o]);
    return e.post_rotation;
  }
  Bounded composite_rotation_of(const Entity& e) const {
    const std::optional<Q> r = rotation_of(e), pr = post_rotation_of(e);
    if (!e.rotation_pivot_translation && !e.rotation_pivot && !r && !pr)
      return exact(*e.composite_rotation);
    Bounded m = exact(identity());
    if (e.rotation_pivot_translation) m = m * exact(translate(*e.rotation_pivot_translation));
    if (e.rotation_pivot) m = m * exact(translate(*e.rotation_pivot));
    if (r) m = m * rotation_factor(*r, rotation_k(e.rotation_euler));
    if (pr) m = m * rotation_factor(*pr, rotation_k(e.post_rotation_euler));
    if (e.rotation_pivot) {
      const V3 p = *e.rotation_pivot;
      m = m * exact(translate(V3{-p.x, -p.y, -p.z}));
    }
    return m;
  }
  std::optional<Bounded> plain_scale_of(const Entity& e) const {
    if (e.uniform_scale) {
      const double s = *e.uniform_scale;
      return exact(scale(V3{s, s, s}));
    }
    if (e.non_uniform_scale) return exact(scale(*e.non_uniform_scale));
    return std::nullopt;
  }
  Bounded composite_scale_of(const Entity& e) const {
    const std::optional<Bounded> s = plain_scale_of(e);
    if (!e.scale_pivot_translation && !e.scale_pivot && !s) return exact(*e.composite_scale);
    Bounded m = exact(identity());
    if (e.scale_pivot_translation) m = m * exact(translate(*e.scale_pivot_translation));
    if (e.scale_pivot) m = m * exact(translate(*e.scale_pivot));
    if (s) m = m * *s;
    if (e.scale_pivot) {
      const V3 p = *e.scale_pivot;
      m = m * exact(translate(V3{-p.x, -p.y, -p.z}));
    }
    return m;
  }
  std::optional<Bounded> parent_scale_inverse_from(const Entity& p) const {
    if (p.composite_scale) return inverse_factor(composite_scale_of(p));
    if (p.uniform_scale) {
      const double s = 1.0 / *p.uniform_scale;
      return rounded(scale(V3{s, s, s}), 1);
    }
    if (p.non_uniform_scale) {
      const V3 v = *p.non_uniform_scale;
      return rounded(scale(V3{1 / v.x, 1 / v.y, 1 / v.z}), 1);
    }
    return std::nullopt;
  }
  // parent: the entity it is attached to, or nullptr for a root.
  Bounded local_of(const Entity& e, const Entity* parent) const {
    bool any_euler = false;
    for (int o = 0; o < 6; ++o) any_euler = any_euler || e.rotation_euler[o].has_value();
    const bool source = e.translation || e.rotation || any_euler || e.uniform_scale ||
                        e.non_uniform_scale || e.composite_rotation || e.composite_scale ||
                        (parent && e.parent_scale_inverse);
    if (!source) {
      const std::optional<M4>& user = parent ? e.local_to_parent : e.local_to_world;
      return exact(user ? *user : identity());
    }
    Bounded m = exact(identity());
    if (e.translation) m = exact(translate(*e.translation));
    if (parent && e.parent_scale_inverse) {
      const std::optional<Bounded> written = parent_scale_inverse_from(*parent);
      m = m * (written ? *written : exact(*e.parent_scale_inverse));
    }
    if (e.composite_rotation) {
      m = m * composite_rotation_of(e);
    } else if (const std::optional<Q> r = rotation_of(e)) {
      m = m * rotation_factor(*r, rotation_k(e.rotation_euler));
    }
    if (e.composite_scale) {
      m = m * composite_scale_of(e);
    } else if (const std::optional<Bounded> s = plain_scale_of(e)) {
      m = m * *s;
    }
    return m;
  }

  // --- the hierarchy, found independently ---
  const Entity* live_parent(const Entity& e) const {
    if (!e.parent) return nullptr;
    auto it = entities.find(*e.parent);
    return it == entities.end() ? nullptr : &it->second;
  }
  // Whether following Parent from `id` comes back to `id`.
  bool on_cycle(EntityId id) const {
    std::unordered_set<EntityId> seen;
    EntityId cur = id;
    while (true) {
      const Entity& e = entities.at(cur);
      if (!e.parent || !entities.count(*e.parent)) return false;
      cur = *e.parent;
      if (cur == id) return true;
      if (!seen.insert(cur).second) return false;  // a cycle above, not through id
    }
  }

  // One frame: every live entity's LocalToWorld, recursively with memoization.
  void evaluate() {
    world_.clear();
    for (auto& [id, e] : entities) world_of(id);
  }
  const Bounded& world(EntityId id) const { return world_.at(id); }
  void end_frame() {
    for (auto& [id, e] : entities)
      if (e.is_static) e.baked = true;
  }

 private:
  const Bounded& world_of(EntityId id) {
    if (auto it = world_.find(id); it != world_.end()) return it->second;
    Entity& e = entities.at(id);
    Bounded w;
    if (e.is_static && e.baked && e.frozen) {
      w = *e.frozen;
    } else if (e.override_ltw) {
      w = exact(e.local_to_world ? *e.local_to_world : identity());
    } else {
      const Entity* parent = on_cycle(id) ? nullptr : live_parent(e);
      w = parent ? world_of(*e.parent) * local_of(e, parent) : local_of(e, nullptr);
    }
    if (e.is_static && !(e.baked && e.frozen)) e.frozen = w;
    return world_.emplace(id, w).first->second;
  }

  std::unordered_map<EntityId, Bounded> world_;
};

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
