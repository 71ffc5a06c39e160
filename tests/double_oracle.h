// An independent double-precision model of the transform rules and the hierarchy, the oracle
// of the randomized reference tests (random_scene_test.cpp). The model keeps its own copy of
// every entity's components (what a test wrote into the store) and evaluates LocalToWorld in
// double precision with its own quaternion, Euler, matrix and inverse code, recursing over the
// parent chain with memoization and finding cycles by itself. It shares nothing with
// compose.cpp, reference.cpp or depth_order.cpp: every rule below is written again from
// NOTES.md.
//
// Tolerance: the model carries, next to each matrix, a componentwise error bound in the usual
// first-order form |float - exact| <= k * u * B, where u = 2^-24 is float's unit roundoff, B is
// the product of the entrywise absolute values of every factor that went into the matrix (so
// cancellation, e.g. about a pivot, cannot hide error), and k counts the roundings: a 4x4
// product adds 4 (gamma_4) to the sum of its operands' k; a rotation matrix from a float
// quaternion starts at 8 (16 when the quaternion came from Euler angles) with B >= |q|^2 on its
// 3x3 block; a float reciprocal at 1; a 4x4 inverse at k(A) + 32 with B = |A^-1| B(A) |A^-1|
// (first-order perturbation of the inverse).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "components.h"

namespace tprop::double_oracle {

// ---------------------------------------------------------------------------------------------
// The model's own double-precision math.
using M4 = std::array<std::array<double, 4>, 4>;  // row-major
struct Q { double x, y, z, w; };
struct V3 { double x, y, z; };

inline M4 identity() { return M4{{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}}; }
inline M4 translate(V3 v) {
  return M4{{{1, 0, 0, v.x}, {0, 1, 0, v.y}, {0, 0, 1, v.z}, {0, 0, 0, 1}}};
}
inline M4 scale(V3 v) {
  return M4{{{v.x, 0, 0, 0}, {0, v.y, 0, 0}, {0, 0, v.z, 0}, {0, 0, 0, 1}}};
}
inline M4 multiply(const M4& a, const M4& b) {
  M4 out{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) out[i][j] += a[i][k] * b[k][j];
  return out;
}
inline M4 absolute(const M4& a) {
  M4 out;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) out[i][j] = std::abs(a[i][j]);
  return out;
}
// Gauss-Jordan with partial pivoting.
inline M4 inverse(M4 a) {
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
inline Q qmul(Q a, Q b) {
  return Q{a.w * b.x + b.w * a.x + (a.y * b.z - a.z * b.y),
           a.w * b.y + b.w * a.y + (a.z * b.x - a.x * b.z),
           a.w * b.z + b.w * a.z + (a.x * b.y - a.y * b.x),
           a.w * b.w - (a.x * b.x + a.y * b.y + a.z * b.z)};
}
// The unit-quaternion formula applied as given (no normalization), row-major.
inline M4 rotate(Q q) {
  const double x = q.x, y = q.y, z = q.z, w = q.w;
  M4 m = identity();
  m[0] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 0};
  m[1] = {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 0};
  m[2] = {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y), 0};
  return m;
}
// Euler order index 0..5 = XYZ, XZY, YXZ, YZX, ZXY, ZYX: the first letter turns first.
inline Q euler(int order, V3 angles) {
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
inline Bounded exact(const M4& m) { return Bounded{m, absolute(m), 0}; }
inline Bounded rounded(const M4& m, double k) { return Bounded{m, absolute(m), k}; }
inline Bounded operator*(const Bounded& a, const Bounded& b) {
  return Bounded{multiply(a.v, b.v), multiply(a.b, b.b), a.k + b.k + 4};
}
inline Bounded rotation_factor(Q q, double k) {
  Bounded r = rounded(rotate(q), k);
  const double n2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r.b[i][j] = std::max(r.b[i][j], n2);
  return r;
}
inline Bounded inverse_factor(const Bounded& a) {
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
    // README (Semantics): a factor without a finite float reciprocal inverts to 0.
    const auto inv = [](double s) {
      return std::fabs(s) < double(std::numeric_limits<float>::min()) ? 0.0 : 1.0 / s;
    };
    if (p.uniform_scale) {
      const double s = inv(*p.uniform_scale);
      return rounded(scale(V3{s, s, s}), 1);
    }
    if (p.non_uniform_scale) {
      const V3 v = *p.non_uniform_scale;
      return rounded(scale(V3{inv(v.x), inv(v.y), inv(v.z)}), 1);
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

}  // namespace tprop::double_oracle
