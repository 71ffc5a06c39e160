#version 460
// Evaluate: LocalToWorld of every entity the list names, level after level. Compose and
// propagate in one step, so the local matrix never travels through memory: the entity's own
// matrix (local_matrix.glsl, a user-written value or a frozen Static), times its parent's
// LocalToWorld when it is attached, written to local_to_world[slot]. Built twice:
// With pc.aux = 1, an entity is recomputed only when its own or its parent's dirty[] is
// this frame's (it then marks itself for its children): the whole order is followed, but a clean
// entity costs the reads of its list entry, parent index and two marks.
//  - wide (default): one invocation per entry of one level's segment [pc.first, + pc.count);
//  - TPROP_NARROW: one workgroup walks the levels [pc.first, pc.first + pc.count), each at most
//    kNarrowLevelMax entities (so the inner loop runs at most 8 times), with a workgroup barrier
//    between levels, so a deep chain costs one dispatch per kNarrowLevelsPerDispatch levels
//    instead of one per level;
//  - TPROP_SERIAL: the same run of narrow levels walked by a single invocation, with no barrier
//    at all. On a CPU device (llvmpipe) a barrier costs more than the work of a thin level, so
//    this is several times faster there; on a GPU one invocation is latency-bound, so the
//    workgroup walk stays (PropagatorOptions::narrow_walk).
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"
#include "local_matrix.glsl"

#if defined(TPROP_SERIAL)
layout(local_size_x = 1) in;
#elif defined(TPROP_NARROW)
layout(local_size_x = TPROP_NARROW_GROUP_SIZE) in;
#else
layout(local_size_x = TPROP_WIDE_GROUP_SIZE) in;
#endif

void evaluate(uint slot) {
  if (pc.aux != 0u && DIRTY(slot) != pc.frame) {
    uint parent = PARENT(slot);
    if (parent == kNoIndex || DIRTY(parent) != pc.frame) return;
    DIRTY(slot) = pc.frame;
  }
  uint f = FLAGS(slot);
  mat4 m = own_matrix(slot, f);
  // The reference's product: LocalToWorld[parent] * local.
  if ((f & kFlagWorldFinal) == 0u) m = WORLD(PARENT(slot)) * m;
  WORLD(slot) = m;
  if ((f & kFlagStoreFrozen) != 0u) FROZEN(STATIC_INDEX(slot)) = m;
}

void main() {
#if defined(TPROP_SERIAL)
  for (uint level = pc.first; level < pc.first + pc.count; ++level) {
    uvec2 segment = LEVELS(level);
    for (uint k = 0u; k < segment.y; ++k) evaluate(LIST(segment.x + k));
  }
#elif defined(TPROP_NARROW)
  for (uint level = pc.first; level < pc.first + pc.count; ++level) {
    uvec2 segment = LEVELS(level);
    for (uint k = gl_LocalInvocationID.x; k < segment.y; k += TPROP_NARROW_GROUP_SIZE) {
      evaluate(LIST(segment.x + k));
    }
    // The next level reads what this one wrote, from other invocations of this workgroup.
    memoryBarrierBuffer();
    barrier();
  }
#else
  uint i = flat_invocation(kWideGroupSize);
  if (i < pc.count) evaluate(LIST(pc.first + i));
#endif
}
