#version 460
// Propagate: LocalToWorld[pos] = LocalToWorld[parent] * LocalToParent[pos], in place, levels in
// order. Built twice:
//  - wide (default): one dispatch per level, one invocation per entity of that level;
//  - TPROP_WINDOWED (wide only): the level's own entities through descriptors over a window of
//    positions (scene_access.glsl), for scenes beyond one binding per array;
//  - TPROP_NARROW: one workgroup walks a run of narrow levels (each at most kNarrowLevelMax
//    entities, so the inner loop runs at most 8 times), with a workgroup barrier between levels, so a deep chain costs one dispatch per
//    kNarrowLevelsPerDispatch levels instead of one per level.
#extension GL_GOOGLE_include_directive : require
#include "scene_access.glsl"

#ifdef TPROP_NARROW
layout(local_size_x = TPROP_NARROW_GROUP_SIZE) in;
#else
layout(local_size_x = TPROP_WIDE_GROUP_SIZE) in;
#endif

void propagate(uint pos) {
  uint self = SELF(pos);
  uint f = FLAGS_SELF[self];
  if ((f & kFlagWorldFinal) != 0u) return;
  uint parent = PARENT_SELF[self];
  mat4 m = WORLD[parent] * WORLD_SELF[self];
  WORLD_SELF[self] = m;
  if ((f & kFlagStoreFrozen) != 0u) {
    FROZEN[STATIC_INDEX_SELF[self]] = m;
  }
}

void main() {
#ifdef TPROP_NARROW
  for (uint level = pc.level_begin; level < pc.level_end; ++level) {
    uint end = LEVEL_OFFSETS[level + 1u];
    for (uint pos = LEVEL_OFFSETS[level] + gl_LocalInvocationID.x; pos < end;
         pos += TPROP_NARROW_GROUP_SIZE) {
      propagate(pos);
    }
    // The next level reads what this one wrote, from other invocations of this workgroup.
    memoryBarrierBuffer();
    barrier();
  }
#else
  uint i = flat_invocation(kWideGroupSize);
  if (i < pc.count) propagate(pc.first + i);
#endif
}
