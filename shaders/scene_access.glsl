// GLSL side of scene_layout.h: how the passes reach the scene's arrays, as function-like macros
// (FLAGS(slot), DIRTY(slot) = frame, RARE(r).composite_scale, ...; each names an element, read or
// written; LocalToWorld is written through store_world(), which follows the output's layout) so
// that each pass is written once and built in two addressings:
//  - default: buffer device addresses, through each array's piece table (scene_layout.h): an
//    array may span any number of buffers, so any scene that fits in memory works, past
//    maxStorageBufferRange and past maxMemoryAllocationSize;
//  - TPROP_DESCRIPTORS: one storage-buffer descriptor per array (set 0, bindings as in
//    scene_layout.h), only when every array is one piece that fits one binding. Measured on
//    lavapipe: a pass storing one mat4 per invocation ran 3 to 4 times faster through
//    descriptors than through device addresses, so the host uses this variant whenever it can.
// With TPROP_TEXEL_READS too, in either variant (only the evaluate passes, propagate.comp), the
// arrays those passes never write are read through uniform texel buffers instead (scene_layout.h
// says why; beside device addresses, lavapipe's large scenes: Addressing::AddressTexels);
// TPROP_TEXEL_EARLIER, which propagate.comp sets only where no invocation of the dispatch wrote
// what it reads, reads a parent's LocalToWorld (load_world, local_matrix.glsl) and the dirty
// marks (DIRTY_EARLIER) that way too.
// The accessors take an index, not [index]: which piece holds an element depends on the index,
// which an object-like macro followed by [...] cannot see. (A pass still written FLAGS[slot]
// does not compile: FLAGS alone names nothing.)
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "scene_layout.h"
#include "output_layout.h"
#include "pass_features.h"

// What a pass is specialized for (pass_features.h). All bits by default: the general shader;
// the host always specializes it. Declared here, not in local_matrix.glsl, because the scatter
// needs the output layout too.
layout(constant_id = TPROP_SPEC_PASS_FEATURES) const uint kPassFeatures = 0xffffffffu;
const bool kAffineOutput = (kPassFeatures & kFeatureAffineOutput) != 0u;
const bool kWordStores = (kPassFeatures & kFeatureWordStores) != 0u;

// The narrow pass reads what other invocations of its own workgroup wrote a level earlier (world
// and dirty marks), the fused pass what other workgroups of its dispatch wrote, hence coherent
// there; elsewhere dispatch boundaries order everything.
#if defined(TPROP_NARROW) || defined(TPROP_FUSED)
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
// The same binding in the scatter's set: the frame's value deltas (scene_layout.h).
layout(std430, set = 0, binding = 7) buffer ValueDeltaBuffer { ValueDelta v[]; } b_value_deltas;
layout(std430, set = 0, binding = 8) buffer FrozenBuffer { mat4 v[]; } b_frozen;
layout(std430, set = 0, binding = 9) TPROP_MAT4_COHERENCE buffer WorldBuffer { mat4 v[]; } b_world;
// The same binding seen in the Affine3x4 layout: each variant uses one of the two.
layout(std430, set = 0, binding = 9) TPROP_MAT4_COHERENCE buffer WorldAffineBuffer {
  Affine3x4 v[];
} b_world_affine;
// And as columns, for the wide pass's stores through shared memory (propagate.comp).
layout(std430, set = 0, binding = 9) TPROP_MAT4_COHERENCE buffer WorldColumnBuffer {
  vec4 v[];
} b_world_columns;
// And as 64-bit words, two to a column (or row), for kFeatureWordStores (store_world).
layout(std430, set = 0, binding = 9) TPROP_MAT4_COHERENCE buffer WorldWordBuffer {
  u64vec2 v[];
} b_world_words;
layout(std430, set = 0, binding = 10) buffer LevelBuffer { uvec2 v[]; } b_levels;
layout(std430, set = 0, binding = 11) buffer DeltaBuffer { EntityDelta v[]; } b_deltas;
layout(std430, set = 0, binding = 12) buffer ListBuffer { uint v[]; } b_list;
layout(std430, set = 0, binding = 13) TPROP_MAT4_COHERENCE buffer DirtyBuffer { uint v[]; } b_dirty;

#define FLAGS(i) b_flags.v[i]
#define TRANSLATION(i) b_translation.v[i]
#define ROTATION(i) b_rotation.v[i]
#define SCALE(i) b_scale.v[i]
#define PARENT(i) b_parent.v[i]
#define RARE_INDEX(i) b_rare_index.v[i]
#define STATIC_INDEX(i) b_static_index.v[i]
#define RARE(i) b_rare.v[i]
#define FROZEN(i) b_frozen.v[i]
#define WORLD(i) b_world.v[i]
#define WORLD_AFFINE(i) b_world_affine.v[i]
#define LEVELS(i) b_levels.v[i]
#define DELTAS(i) b_deltas.v[i]
#define VALUE_DELTAS(i) b_value_deltas.v[i]
#define LIST(i) b_list.v[i]
#define DIRTY(i) b_dirty.v[i]

#else

// Whole arrays from a plain address: pointer jumping's scratch (jump.comp), one buffer; its
// matrices are kept as 4 columns or, when affine, 3 rows (vec4s either way). Vec4Array also
// names the LocalToWorld columns of consecutive slots in one piece (propagate.comp's wide
// stores through shared memory).
layout(buffer_reference, std430, buffer_reference_align = 4) buffer UintArray { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4Array { vec4 v[]; };

// One element of a pieced array.
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer PieceTable {
  uint64_t v[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer UintElement { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 4) TPROP_MAT4_COHERENCE buffer
DirtyElement { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Uvec2Element { uvec2 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4Element { vec4 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer RareElement {
  RareRecord v;
};
layout(buffer_reference, std430, buffer_reference_align = 16) TPROP_MAT4_COHERENCE buffer
Mat4Element { mat4 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) TPROP_MAT4_COHERENCE buffer
AffineElement { Affine3x4 v; };
// A column (or row) of LocalToWorld as two 64-bit words (store_world, kFeatureWordStores).
layout(buffer_reference, std430, buffer_reference_align = 16) TPROP_MAT4_COHERENCE buffer
WorldWordsElement { u64vec2 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer DeltaElement {
  EntityDelta v;
};
layout(buffer_reference, std430, buffer_reference_align = 16) buffer ValueDeltaElement {
  ValueDelta v;
};

// The address of element i of the array whose tagged piece table is `table` (scene_layout.h):
// piece i >> shift, element i & (2^shift - 1) within it; an array of one piece tags the piece's
// own address (kPieceDirect), no table read (the branch is uniform: a push constant).
uint64_t element_address(uint64_t table, uint i, uint stride) {
  uint shift = uint(table) & kPieceShiftMask;
  uint64_t base = table & ~uint64_t(kPieceShiftMask);
  uint64_t piece = shift == kPieceDirect ? base : PieceTable(base).v[i >> shift];
  return piece + uint64_t(i & ((1u << shift) - 1u)) * stride;
}

#define FLAGS(i) UintElement(element_address(pc.flags, (i), 4u)).v
#define TRANSLATION(i) Vec4Element(element_address(pc.translation, (i), 16u)).v
#define ROTATION(i) Vec4Element(element_address(pc.rotation, (i), 16u)).v
#define SCALE(i) Vec4Element(element_address(pc.scale, (i), 16u)).v
#define PARENT(i) UintElement(element_address(pc.parent, (i), 4u)).v
#define RARE_INDEX(i) UintElement(element_address(pc.rare_index, (i), 4u)).v
#define STATIC_INDEX(i) UintElement(element_address(pc.static_index, (i), 4u)).v
#define RARE(i) RareElement(element_address(pc.rare, (i), kRareRecordBytes)).v
#define FROZEN(i) Mat4Element(element_address(pc.frozen, (i), 64u)).v
#define WORLD(i) Mat4Element(element_address(pc.local_to_world, (i), 64u)).v
#define WORLD_AFFINE(i) \
  AffineElement(element_address(pc.local_to_world, (i), kAffine3x4Bytes)).v
#define LEVELS(i) Uvec2Element(element_address(pc.levels, (i), 8u)).v
#define DELTAS(i) DeltaElement(element_address(pc.deltas, (i), kEntityDeltaBytes)).v
#define VALUE_DELTAS(i) ValueDeltaElement(element_address(pc.rare, (i), kValueDeltaBytes)).v
#define LIST(i) UintElement(element_address(pc.list, (i), 4u)).v
#define DIRTY(i) DirtyElement(element_address(pc.dirty, (i), 4u)).v

#endif

#ifdef TPROP_TEXEL_READS
// Bindings kBindingCount + kTexel* of set 0 (scene_layout.h), beside either addressing: a scene
// too large for the storage-buffer descriptors (lavapipe binds 128 MiB, about 2 million
// entities) still reads through texel views, which reach further (maxTexelBufferElements).
// Texel fetches are not ordered after this dispatch's own storage writes, so only what the
// evaluate passes never write is read this way; the dispatch boundaries (kComputeReadWrite
// includes sampled reads) order the rest.
layout(set = 0, binding = 14) uniform samplerBuffer t_world;
layout(set = 0, binding = 15) uniform samplerBuffer t_translation;
layout(set = 0, binding = 16) uniform samplerBuffer t_rotation;
layout(set = 0, binding = 17) uniform samplerBuffer t_scale;
layout(set = 0, binding = 18) uniform usamplerBuffer t_list;
layout(set = 0, binding = 19) uniform usamplerBuffer t_parent;
layout(set = 0, binding = 20) uniform usamplerBuffer t_dirty;
#undef TRANSLATION
#undef ROTATION
#undef SCALE
#undef LIST
#undef PARENT
#define TRANSLATION(i) texelFetch(t_translation, int(i))
#define ROTATION(i) texelFetch(t_rotation, int(i))
#define SCALE(i) texelFetch(t_scale, int(i))
#define LIST(i) texelFetch(t_list, int(i)).x
#define PARENT(i) texelFetch(t_parent, int(i)).x
#endif
#ifdef TPROP_TEXEL_EARLIER
#define DIRTY_EARLIER(i) texelFetch(t_dirty, int(i)).x
#endif

// A dirty mark that no invocation of this dispatch wrote (an earlier dispatch's, or this
// entity's own before it writes it): read only, as a texel where the variant allows.
#ifndef DIRTY_EARLIER
#define DIRTY_EARLIER(i) DIRTY(i)
#endif

// Four floats as two 64-bit words holding the same bits in the same order.
u64vec2 as_words(vec4 v) {
  return u64vec2(packUint2x32(floatBitsToUint(v.xy)), packUint2x32(floatBitsToUint(v.zw)));
}

// LocalToWorld[slot] as 64-bit words (kFeatureWordStores), in the output's layout: llvmpipe
// stores a value one component at a time, lane by lane, so 8 words cost it about what 8 floats
// do, half a matrix of floats (PropagatorOptions::world_writes says what that measured).
void store_world_words(uint slot, mat4 m) {
  const uint n = kAffineOutput ? 3u : 4u;
  vec4 parts[4] = vec4[4](m[0], m[1], m[2], m[3]);
  if (kAffineOutput) {
    Affine3x4 a = to_affine3x4(m);
    parts = vec4[4](a.row0, a.row1, a.row2, vec4(0.0));
  }
#ifdef TPROP_DESCRIPTORS
  for (uint k = 0u; k < n; ++k) b_world_words.v[slot * n + k] = as_words(parts[k]);
#else
  // The element's address once (its piece table read once), then its columns or rows.
  uint64_t at = element_address(pc.local_to_world, slot, n * 16u);
  for (uint k = 0u; k < n; ++k) WorldWordsElement(at + uint64_t(k * 16u)).v = as_words(parts[k]);
#endif
}

// Writes LocalToWorld[slot] in the output's layout (an affine m: its last row is not stored).
void store_world(uint slot, mat4 m) {
  if (kWordStores) {
    store_world_words(slot, m);
  } else if (kAffineOutput) {
    WORLD_AFFINE(slot) = to_affine3x4(m);
  } else {
    WORLD(slot) = m;
  }
}

// The flat invocation index of a 2D grid of workgroups (the x dimension is capped at
// kMaxGroupsPerDimension groups, more rows go to y).
uint flat_invocation(uint group_size) {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  return group * group_size + gl_LocalInvocationID.x;
}
