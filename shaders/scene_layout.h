// The one description of the GPU scene layout, included by the GLSL compute shaders and by C++
// (hierarchy/gpu_pack.h, host/propagator.cpp). Every storage array can be reached through
// buffer device addresses passed in the push constants, so no single binding is bound by
// maxStorageBufferRange (128 MiB on lavapipe); when every array fits in one binding the passes
// use descriptors instead (faster on lavapipe, see scene_access.glsl).
//
// Arrays in pieces. No array has to fit one allocation (maxMemoryAllocationSize, 4 GiB on an
// H100, where a 100-million-entity LocalToWorld takes 6.4 GB): each is split into pieces of a
// power-of-two number of elements, each piece its own buffer, so element i lives in piece
// i >> shift at index i & (2^shift - 1). Only the last piece may be shorter. The per-slot arrays
// share one shift (their pieces cover the same slots), chosen so that a LocalToWorld piece fits
// the byte cap; the other arrays each have their own. For the device-address passes, each array
// field of ScenePush holds the address of the array's piece table (one uint64 device address per
// piece) with the shift in its low kPieceShiftBits bits: tables are placed at addresses aligned
// to kPieceTableAlign, so those bits are free, and the shift costs no push-constant space (the
// 128 bytes are all used). An array of one piece needs no table: its field holds the piece's own
// address tagged kPieceDirect (a shift of 31: every index lies in piece 0), which spares the
// passes a dependent load an access; piece_shift() never gives 31 itself.
//
// Arrays indexed by store slot (EntityStore; an entity keeps its slot for its whole life, so its
// data never moves when the hierarchy changes): flags, translation, rotation, scale, parent (the
// attached parent's slot), rare_index, static_index, local_to_world. The rare table is indexed by
// rare_index, the frozen table (Static LocalToWorld values) by static_index. The passes follow a
// list of slots in level segments (levels[L] = (first entry, count)): the whole depth order
// (hierarchy/level_order.h), or a frame's work list of the subtrees that changed. dirty[slot] is
// the number of the last frame that changed the entity: a whole-order pass recomputes only the
// entities whose own or parent's dirty[] is this frame's, marking each it recomputes, so clean
// subtrees cost a few bytes read an entity.
#ifndef TPROP_SCENE_LAYOUT_H
#define TPROP_SCENE_LAYOUT_H

#ifdef __cplusplus
#include <bit>
#include <cstddef>
#include <cstdint>

#include <glm/glm.hpp>
namespace tprop::gpu {
using uint = uint32_t;
using uint64 = uint64_t;
using vec4 = glm::vec4;
using mat4 = glm::mat4;
#define TPROP_CONST inline constexpr uint
#else
#define uint64 uint64_t
#define TPROP_CONST const uint
#endif

// Workgroup sizes. A level wider than kNarrowLevelMax gets a dispatch of its own (about 48 us each
// on lavapipe); runs of consecutive narrower levels share one single-workgroup dispatch that loops
// over them.
// (Macros for GLSL's local_size_x: a constant variable there would make glslc emit
// LocalSizeId, which needs maintenance4.)
#define TPROP_SCATTER_GROUP_SIZE 256
#define TPROP_WIDE_GROUP_SIZE 256
#define TPROP_NARROW_GROUP_SIZE 8
#define TPROP_SCAN_GROUP_SIZE 256
TPROP_CONST kScatterGroupSize = TPROP_SCATTER_GROUP_SIZE;
TPROP_CONST kWideGroupSize = TPROP_WIDE_GROUP_SIZE;
TPROP_CONST kNarrowGroupSize = TPROP_NARROW_GROUP_SIZE;
// A scan's tile (scan.comp), one workgroup of kScanGroupSize invocations with 68 bytes of shared
// memory each (17 KiB; the host checks the device's limit): P consecutive positions of a run k
// wide, P the largest power of two at most min(k, kScanPositionsMax), times T =
// kScanLevelsPerInvocation * kScanGroupSize / P consecutive levels, each invocation
// kScanLevelsPerInvocation consecutive levels of one position. Wide runs so read neighbouring
// list entries side by side, and a short run of many positions (64 levels of 4,096) keeps its
// invocations busy; a chain takes 1,024 levels a tile. scan.comp computes P the same way
// (positions()).
TPROP_CONST kScanGroupSize = TPROP_SCAN_GROUP_SIZE;
TPROP_CONST kScanSharedBytes = TPROP_SCAN_GROUP_SIZE * 68u;
TPROP_CONST kScanPositionsMax = 32u;
// Levels an invocation of the scan composes and multiplies in its registers before the
// workgroup's scan (in shared memory, log2 rounds with two barriers each) combines the
// invocations': that scan, and the carry pass's serial walk over the tiles, cost per tile, so
// four levels an invocation cut both by four.
TPROP_CONST kScanLevelsPerInvocation = 4u;
// The wide pass's stores through shared memory (propagate.comp, WideStores::Shared): a
// workgroup's 4 columns of 256 matrices, each column's run padded by 2 vec4s (conflict-free
// both ways), and two words. Only the variants built for it declare it; the host uses them where
// the device's maxComputeSharedMemorySize holds it (past Vulkan's guaranteed 16 KiB).
TPROP_CONST kWideColumnStride = TPROP_WIDE_GROUP_SIZE + 2u;
TPROP_CONST kWideSharedStoreBytes = 4u * kWideColumnStride * 16u + 8u;
// One narrow workgroup is one SIMD row of llvmpipe (8 lanes of 256 bits): measured on lavapipe, a
// 100,000-deep chain propagates in 0.12 s with 8 invocations against 0.84 s with 64, since every
// level costs a barrier among all of them. Each invocation takes up to 8 entities of a level.
TPROP_CONST kNarrowLevelMax = 64u;
// llvmpipe silently ends any shader loop after 65,535 iterations, so one narrow dispatch walks
// at most this many levels.
TPROP_CONST kNarrowLevelsPerDispatch = 4096u;
// The climb pass (propagate.comp TPROP_CLIMB, PropagatorOptions::climb_top) evaluates the top
// levels of the order in one dispatch, each entity composing the matrices of its ancestors, held
// in registers, from its root down: at most this many levels.
TPROP_CONST kClimbLevelsMax = 16u;
// At most this many workgroups per dimension (the minimum maxComputeWorkGroupCount).
TPROP_CONST kMaxGroupsPerDimension = 65535u;

TPROP_CONST kNoIndex = 0xffffffffu;

// Element sizes of the arrays whose elements are structs (GLSL has no sizeof).
TPROP_CONST kRareRecordBytes = 384u;
TPROP_CONST kEntityDeltaBytes = 64u;
TPROP_CONST kValueDeltaBytes = 48u;

// Piece tables (see the top): the low bits of a table's address carry log2(elements per piece).
TPROP_CONST kPieceShiftBits = 5u;
TPROP_CONST kPieceShiftMask = (1u << kPieceShiftBits) - 1u;
TPROP_CONST kPieceTableAlign = 1u << kPieceShiftBits;
TPROP_CONST kPieceDirect = kPieceShiftMask;

// The descriptor variant of the passes (TPROP_DESCRIPTORS in scene_access.glsl): set 0, one
// storage buffer per array, in this order.
TPROP_CONST kBindingFlags = 0u;
TPROP_CONST kBindingTranslation = 1u;
TPROP_CONST kBindingRotation = 2u;
TPROP_CONST kBindingScale = 3u;
TPROP_CONST kBindingParent = 4u;
TPROP_CONST kBindingRareIndex = 5u;
TPROP_CONST kBindingStaticIndex = 6u;
TPROP_CONST kBindingRare = 7u;  // the scatter's set: the value deltas (it reads no rare)
TPROP_CONST kBindingFrozen = 8u;
TPROP_CONST kBindingWorld = 9u;
TPROP_CONST kBindingLevels = 10u;
TPROP_CONST kBindingDeltas = 11u;
TPROP_CONST kBindingList = 12u;
TPROP_CONST kBindingDirty = 13u;
TPROP_CONST kBindingCount = 14u;
// The texel variant (TPROP_TEXEL_READS): the same set, plus the arrays the evaluate passes only
// read, seen again as uniform texel buffers (R32G32B32A32_SFLOAT for vec4 elements, a
// LocalToWorld being 4 or 3 of them; R32_UINT for indices and dirty marks). Measured on lavapipe (Mesa 22.3):
// llvmpipe loads a storage-buffer element lane by lane, each component behind its own branch and
// bounds check, but fetches a texel for all 8 lanes in straight-line code, so a 1M forest's full
// evaluation took about a third less time. Bindings kBindingCount + k, k in this order.
TPROP_CONST kTexelWorld = 0u;        // read as a parent's LocalToWorld (not by the walks)
TPROP_CONST kTexelTranslation = 1u;
TPROP_CONST kTexelRotation = 2u;
TPROP_CONST kTexelScale = 3u;
TPROP_CONST kTexelList = 4u;
TPROP_CONST kTexelParent = 5u;
TPROP_CONST kTexelDirty = 6u;        // read where an earlier dispatch wrote it (as kTexelWorld)
TPROP_CONST kTexelCount = 7u;

// flags[slot]: what the host resolved about the entity (hierarchy/gpu_pack.cpp decides; the
// shaders only follow). Presence bits first; a parent's bits are read by its children.
TPROP_CONST kFlagTranslation = 1u << 0u;        // translation[slot] is used
TPROP_CONST kFlagRotation = 1u << 1u;           // rotation[slot] (Euler already resolved) is used
TPROP_CONST kFlagScale = 1u << 2u;              // scale[slot].xyz (Scale or NonUniformScale)
TPROP_CONST kFlagCompositeRotation = 1u << 3u;  // rare.composite_rotation is used
TPROP_CONST kFlagCompositeScale = 1u << 4u;     // rare.composite_scale (children: rare.inverse_...)
TPROP_CONST kFlagParentScaleInverse = 1u << 5u; // attached and has ParentScaleInverse
// The entity's own matrix (exactly one of these four); a live entity always has one, so flags 0
// marks a dead slot:
TPROP_CONST kFlagComputeLocal = 1u << 8u;       // T * [PSI] * Rot * Scl
TPROP_CONST kFlagUserLocal = 1u << 9u;          // rare.user_local_to_parent (identity if no rare)
TPROP_CONST kFlagUserWorld = 1u << 10u;         // rare.user_local_to_world (identity if no rare)
TPROP_CONST kFlagReadFrozen = 1u << 11u;        // frozen[static_index[slot]]
// Propagation:
TPROP_CONST kFlagWorldFinal = 1u << 12u;        // the own matrix is the LocalToWorld (no parent)
TPROP_CONST kFlagStoreFrozen = 1u << 13u;       // a Static's first frame: save into frozen[]

// One per entity that needs a matrix the common arrays cannot hold; everything resolved on the
// host (pivots, PostRotation, Euler angles, the inverse of a CompositeScale), so the shader does
// no trigonometry and no general matrix inverse. Identity where the component is absent.
struct RareRecord {
  mat4 composite_rotation;          // resolved CompositeRotation (computed or user-written)
  mat4 composite_scale;             // resolved CompositeScale
  mat4 inverse_composite_scale;     // what this entity writes into its children's PSI
  mat4 user_parent_scale_inverse;   // user-written ParentScaleInverse
  mat4 user_local_to_parent;        // user-written LocalToParent
  mat4 user_local_to_world;         // user-written LocalToWorld
};

// An entity whose new values are all that changed (most of a game's frame, every entity of a
// scene where everything moves): its translation, rotation and scale, 48 bytes, written to its
// slot by scatter.comp's values pass; the slot's other arrays stay as they are.
struct ValueDelta {
  float translation_x;
  float translation_y;
  float translation_z;
  uint slot;
  vec4 rotation;
  vec4 scale;  // xyz; w unused
};

// Any other changed entity of a frame (new, dead, re-parented, components added or removed, a
// Static baked): everything its slot holds, written there by scatter.comp (flags 0: the slot
// died, and its LocalToWorld becomes all zeros). 64 bytes, no padding: the translation's three
// floats fill the header's row (the per-slot array keeps a vec4 with w = 0).
struct EntityDelta {
  uint slot;
  uint flags;
  uint parent;
  uint rare_index;
  uint static_index;
  float translation_x;
  float translation_y;
  float translation_z;
  vec4 rotation;
  vec4 scale;  // xyz; w unused
};

// Push constants shared by every pipeline (128 bytes, the guaranteed maxPushConstantsSize).
// Each uint64 array field is, for the device-address passes, the tagged address of the array's
// piece table (see the top; element i of that array is in piece i >> shift); the descriptor
// passes ignore them. The element types:
struct ScenePush {
  uint64 flags;           // uint[]
  // vec4[] (xyz; w unused). Padded: measured on lavapipe (device-address passes), compose of
  // 1,000,000 roots took 450-550 ms with translation and scale padded to 16 bytes, 540-650 ms
  // with tight float3.
  uint64 translation;
  uint64 rotation;        // vec4[] quaternion (x, y, z, w)
  uint64 scale;           // vec4[] (xyz; w unused)
  uint64 parent;          // uint[] attached parent slot, kNoIndex at the root
  uint64 rare_index;      // uint[] index into rare, kNoIndex when none
  uint64 static_index;    // uint[] index into frozen, kNoIndex for non-Static
  uint64 rare;            // RareRecord[]; the values scatter: ValueDelta[] (it reads no rare)
  uint64 frozen;          // mat4[]
  uint64 local_to_world;  // mat4[] (the output, column-major, 64-byte stride)
  uint64 levels;          // uvec2[level]: (first list entry, count) of each level's segment;
                          // then the frame's order changes, (entry, slot) pairs
  uint64 deltas;          // EntityDelta[] (scatter only); the pointer-jumping passes put the
                          // plain address of their scratch buffer (one piece) here instead
  uint64 list;            // uint[]: the slots the passes follow, level segment after segment
  uint64 dirty;           // uint[]: per slot, the last frame that changed the entity
  uint first;             // scatter: where the order changes start in levels[];
                          // wide: first list entry; narrow: first level
  uint count;             // scatter: entity deltas + order changes; wide: entries; narrow: levels
  uint frame;             // this frame's number (never 0)
  uint aux;               // evaluate: 1 recomputes only entities whose own or parent's dirty[]
                          // is `frame`, 3 the same where most will (the wide pass's stores);
                          // scatter: how many of `count` are entity deltas
};

#ifdef __cplusplus
static_assert(sizeof(RareRecord) == kRareRecordBytes);
static_assert(offsetof(RareRecord, inverse_composite_scale) == 128);
static_assert(offsetof(RareRecord, user_local_to_world) == 320);
static_assert(sizeof(EntityDelta) == kEntityDeltaBytes);
static_assert(sizeof(ValueDelta) == kValueDeltaBytes);
static_assert(offsetof(ValueDelta, slot) == 12 && offsetof(ValueDelta, rotation) == 16);
static_assert(offsetof(EntityDelta, static_index) == 16);
static_assert(offsetof(EntityDelta, translation_x) == 20);
static_assert(offsetof(EntityDelta, rotation) == 32);
static_assert(offsetof(EntityDelta, scale) == 48);
static_assert(sizeof(ScenePush) == 128);
static_assert(offsetof(ScenePush, levels) == 80);
static_assert(offsetof(ScenePush, deltas) == 88);
static_assert(offsetof(ScenePush, list) == 96);
static_assert(offsetof(ScenePush, dirty) == 104);
static_assert(offsetof(ScenePush, first) == 112);
static_assert(offsetof(ScenePush, aux) == 124);
static_assert(sizeof(mat4) == 64 && sizeof(vec4) == 16);
// scan.comp's P (positions()) and T for a run k wide (k >= 1), and the tiles of `levels` levels.
inline constexpr uint scan_positions(uint k) {
  return std::bit_floor(k) < kScanPositionsMax ? std::bit_floor(k) : kScanPositionsMax;
}
inline constexpr uint scan_tile_levels(uint k) {
  return kScanLevelsPerInvocation * kScanGroupSize / scan_positions(k);
}
inline constexpr uint scan_tiles(uint k, uint levels) {
  return (levels + scan_tile_levels(k) - 1) / scan_tile_levels(k);
}
// The workgroups of scan.comp's reduce and write passes: a tile of P positions each.
inline constexpr uint scan_tile_groups(uint k, uint levels) {
  return (k + scan_positions(k) - 1) / scan_positions(k) * scan_tiles(k, levels);
}
static_assert(scan_positions(1) == 1 &&
              scan_tile_levels(1) == kScanLevelsPerInvocation * kScanGroupSize);
static_assert(scan_positions(6) == 4 && scan_positions(150) == kScanPositionsMax);
// A shift up to 31 (pieces of up to 2^31 elements) fits the tag.
static_assert(kPieceShiftMask >= 31u && kPieceTableAlign % sizeof(uint64) == 0);
}  // namespace tprop::gpu
#endif

#undef TPROP_CONST
#endif  // TPROP_SCENE_LAYOUT_H
