// GLSL side of scene_layout.h: how the passes reach the scene's arrays, as macros
// (FLAGS[slot], WORLD[slot] = m, ...) so that each pass is written once and built in two variants:
//  - default: buffer device addresses from the push constants (GL_EXT_buffer_reference): no
//    binding is limited by maxStorageBufferRange, so any scene that fits in memory works;
//  - TPROP_DESCRIPTORS: one storage-buffer descriptor per array (set 0, bindings as in
//    scene_layout.h). Measured on lavapipe: a pass storing one mat4 per invocation ran 3 to 4
//    times faster through descriptors than through device addresses, so the host uses this
//    variant whenever every array fits in one binding.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "scene_layout.h"

// The narrow pass reads what other invocations of its own workgroup wrote a level earlier (world
// and dirty marks), hence coherent there; elsewhere dispatch boundaries order everything.
#ifdef TPROP_NARROW
#define TPROP_MAT4_COHERENCE coherent
#else
#define TPROP_MAT4_COHERENCE
#endif

layout(push_constant, std430) uniform Push { ScenePush pc; };

#ifdef TPROP_DESCRIPTORS

layout(std430, set = 0, binding = 0) buffer FlagsBuffer { uint v[]; } b_flags;
layout(std430, set = 0, binding = 1) buffer TranslationBuffer { vec4 v[]; } b_translation;
layout(std430, set = 0, binding = 2) buffer RotationBuffer { vec4 v[]; } b_rotation;
layout(std430, set = 0, binding = 3) buffer ScaleBuffer { vec4 v[]; } b_scale;
layout(std430, set = 0, binding = 4) buffer ParentBuffer { uint v[]; } b_parent;
layout(std430, set = 0, binding = 5) buffer RareIndexBuffer { uint v[]; } b_rare_index;
layout(std430, set = 0, binding = 6) buffer StaticIndexBuffer { uint v[]; } b_static_index;
layout(std430, set = 0, binding = 7) buffer RareBuffer { RareRecord v[]; } b_rare;
layout(std430, set = 0, binding = 8) buffer FrozenBuffer { mat4 v[]; } b_frozen;
layout(std430, set = 0, binding = 9) TPROP_MAT4_COHERENCE buffer WorldBuffer { mat4 v[]; } b_world;
layout(std430, set = 0, binding = 10) buffer LevelBuffer { uvec2 v[]; } b_levels;
layout(std430, set = 0, binding = 11) buffer DeltaBuffer { EntityDelta v[]; } b_deltas;
layout(std430, set = 0, binding = 12) buffer ListBuffer { uint v[]; } b_list;
layout(std430, set = 0, binding = 13) TPROP_MAT4_COHERENCE buffer DirtyBuffer { uint v[]; } b_dirty;

#define FLAGS b_flags.v
#define TRANSLATION b_translation.v
#define ROTATION b_rotation.v
#define SCALE b_scale.v
#define PARENT b_parent.v
#define RARE_INDEX b_rare_index.v
#define STATIC_INDEX b_static_index.v
#define RARE b_rare.v
#define FROZEN b_frozen.v
#define WORLD b_world.v
#define LEVELS b_levels.v
#define DELTAS b_deltas.v
#define LIST b_list.v
#define DIRTY b_dirty.v

#else

layout(buffer_reference, std430, buffer_reference_align = 4) buffer UintArray { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) TPROP_MAT4_COHERENCE buffer
DirtyArray { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Uvec2Array { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4Array { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer RareArray {
  RareRecord v[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) TPROP_MAT4_COHERENCE buffer Mat4Array {
  mat4 v[];
};
layout(buffer_reference, std430, buffer_reference_align = 16) buffer DeltaArray {
  EntityDelta v[];
};

#define FLAGS UintArray(pc.flags).v
#define TRANSLATION Vec4Array(pc.translation).v
#define ROTATION Vec4Array(pc.rotation).v
#define SCALE Vec4Array(pc.scale).v
#define PARENT UintArray(pc.parent).v
#define RARE_INDEX UintArray(pc.rare_index).v
#define STATIC_INDEX UintArray(pc.static_index).v
#define RARE RareArray(pc.rare).v
#define FROZEN Mat4Array(pc.frozen).v
#define WORLD Mat4Array(pc.local_to_world).v
#define LEVELS Uvec2Array(pc.levels).v
#define DELTAS DeltaArray(pc.deltas).v
#define LIST UintArray(pc.list).v
#define DIRTY DirtyArray(pc.dirty).v

#endif

// The flat invocation index of a 2D grid of workgroups (the x dimension is capped at
// kMaxGroupsPerDimension groups, more rows go to y).
uint flat_invocation(uint group_size) {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  return group * group_size + gl_LocalInvocationID.x;
}
