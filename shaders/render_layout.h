// The renderer sample's interface: push constants shared by render_instances.vert and
// samples/render_scene.cpp. The sample draws each piece of tprop's LocalToWorld output with one
// draw, reading the piece through its device address, one element per instance in the output's
// layout (output_layout.h: a float4x4, or Affine3x4 rows); firstInstance is the piece's first
// slot, so gl_InstanceIndex is the store slot throughout.
#ifndef TPROP_RENDER_LAYOUT_H
#define TPROP_RENDER_LAYOUT_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>

#include <glm/glm.hpp>
namespace tprop::render {
using uint = uint32_t;
using uint64 = uint64_t;
using mat4 = glm::mat4;
#else
#define uint64 uint64_t
#endif

struct RenderPush {
  mat4 view_proj;         // world -> Vulkan clip space (y down, depth 0..1)
  uint64 local_to_world;  // device address of a piece of tprop's output
  float half_size;        // the cube's half edge, in each entity's local units
  uint first_slot;        // the piece's first slot: instance gl_InstanceIndex - first_slot
  uint affine;            // 1: the output is OutputLayout::Affine3x4 (48-byte rows), 0: float4x4
  uint pad0;
  uint pad1;
  uint pad2;
};

#ifdef __cplusplus
static_assert(sizeof(RenderPush) == 96);  // std430 rounds the block to its mat4's 16 bytes
static_assert(offsetof(RenderPush, local_to_world) == 64);
static_assert(offsetof(RenderPush, first_slot) == 76);
static_assert(offsetof(RenderPush, affine) == 80);
}  // namespace tprop::render
#endif

#endif  // TPROP_RENDER_LAYOUT_H
