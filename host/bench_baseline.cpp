#include "bench_baseline.h"

#include <cassert>

namespace tprop::bench {

bool baseline_applies(const EntityStore& store) {
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot)
    if (store.alive_at(slot) && (store.mask_at(slot) & ~kBaselineComponents) != 0) return false;
  return true;
}

void baseline_loop(const EntityStore& store, const DepthOrder& order,
                   std::vector<float4x4>& local_to_world) {
  const uint32_t n = order.size();
  local_to_world.resize(n);
  float4x4* world = local_to_world.data();
  for (uint32_t pos = 0; pos < n; ++pos) {
    const uint32_t slot = order.slot[pos];
    const ComponentMask mask = store.mask_at(slot);
    assert((mask & ~kBaselineComponents) == 0 && "baseline_loop needs baseline_applies()");
    float3 s(1.0f);
    if (mask & bit(Component::Scale)) {
      s = float3(store.scale_at(slot));
    } else if (mask & bit(Component::NonUniformScale)) {
      s = store.non_uniform_scale_at(slot);
    }
    // R * S as three columns, then T as the fourth.
    float4 c0(s.x, 0, 0, 0), c1(0, s.y, 0, 0), c2(0, 0, s.z, 0);
    if (mask & bit(Component::Rotation)) {
      const quat q = store.rotation_at(slot);
      const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
      const float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
      const float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
      c0 = float4(1 - 2 * (yy + zz), 2 * (xy + wz), 2 * (xz - wy), 0) * s.x;
      c1 = float4(2 * (xy - wz), 1 - 2 * (xx + zz), 2 * (yz + wx), 0) * s.y;
      c2 = float4(2 * (xz + wy), 2 * (yz - wx), 1 - 2 * (xx + yy), 0) * s.z;
    }
    const float3 t =
        (mask & bit(Component::Translation)) ? store.translation_at(slot) : float3(0.0f);
    float4x4& out = world[pos];
    const uint32_t parent = order.parent[pos];
    if (parent == DepthOrder::kNone) {
      out[0] = c0;
      out[1] = c1;
      out[2] = c2;
      out[3] = float4(t, 1.0f);
      continue;
    }
    // parent * local with local's last row (0, 0, 0, 1): 48 multiplies instead of 64.
    const float4x4& p = world[parent];
    out[0] = p[0] * c0.x + p[1] * c0.y + p[2] * c0.z;
    out[1] = p[0] * c1.x + p[1] * c1.y + p[2] * c1.z;
    out[2] = p[0] * c2.x + p[1] * c2.y + p[2] * c2.z;
    out[3] = p[0] * t.x + p[1] * t.y + p[2] * t.z + p[3];
  }
}

uint64_t frame_bytes(const EntityStore& store, uint64_t local_to_world_bytes) {
  uint64_t bytes = 0;
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot) {
    if (!store.alive_at(slot)) continue;
    const ComponentMask mask = store.mask_at(slot);
    bytes += local_to_world_bytes;
    if (mask & bit(Component::Translation)) bytes += sizeof(float3);
    if (mask & bit(Component::Rotation)) bytes += sizeof(quat);
    if (mask & bit(Component::Scale)) bytes += sizeof(float);
    if (mask & bit(Component::NonUniformScale)) bytes += sizeof(float3);
    if (mask & bit(Component::Parent)) bytes += sizeof(EntityId);
  }
  return bytes;
}

}  // namespace tprop::bench
