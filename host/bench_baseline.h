// What tprop_bench compares the GPU against: a plain single-thread C++ loop over the same scene
// in the same process, and the byte model behind the effective GB/s figures.
#pragma once

#include <cstdint>
#include <vector>

#include "depth_order.h"
#include "entity_store.h"
#include "math.h"

namespace tprop::bench {

// The components the loop understands: what the generators write. Anything else (Euler angles,
// pivots, matrix components, Static, WriteGroupOverride) is the CPU reference's business.
inline constexpr ComponentMask kBaselineComponents =
    bit(Component::Translation) | bit(Component::Rotation) | bit(Component::Scale) |
    bit(Component::NonUniformScale) | bit(Component::Parent);

// Whether every live entity carries only kBaselineComponents.
bool baseline_applies(const EntityStore& store);

// LocalToWorld by position in `order` (sort_by_depth of the store): T * R * S composed straight
// from the store's per-slot records and multiplied by the parent's LocalToWorld, parents first. Written
// for speed, unlike CpuReference (which is written to be obviously right and checks it):
// the affine products skip the constant last row. Requires baseline_applies(store).
void baseline_loop(const EntityStore& store, const DepthOrder& order,
                   std::vector<float4x4>& local_to_world);

// The byte model of tprop_bench's GB/s: the bytes a frame must move to compute every
// LocalToWorld once, counted per live entity as
//   the input components it reads, at their size in the store (Translation 12, Rotation 16,
//   Scale 4, NonUniformScale 12, the parent index 4 when it has a Parent), plus
//   the LocalToWorld it writes in the output's layout: `local_to_world_bytes`, 64 for a
//   float4x4, 48 for OutputLayout::Affine3x4 (OutputBinding::stride).
// The parent's LocalToWorld that a child reads is not counted (a cache, or registers along a
// chain, hold it), nor is the upload (FrameStats::upload_bytes is reported on its own). A frame
// counts the share of the scene it evaluated (FrameStats::evaluated_entities: none when nothing
// changed, a work list, or the whole order; a whole-order pass that skips the unchanged on the
// GPU moves less than this), so the full first frame is the throughput figure.
uint64_t frame_bytes(const EntityStore& store, uint64_t local_to_world_bytes);

}  // namespace tprop::bench
