// The renderer sample: the model for integrating tprop into an application's own renderer.
//
// The application owns the Vulkan device (render_device.h) and hands it to tprop
// (VulkanContext::adopt). Each frame it records tprop's propagation into its own command buffer,
// places the one barrier between tprop's compute write and its vertex-shader read, and draws one
// cube per entity, reading each instance's LocalToWorld straight from tprop's output buffer
// through its device address: no readback, no copy (one draw per piece of the output).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "math.h"
#include "propagator.h"
#include "result.h"
#include "scene.h"

namespace tprop::sample {

struct RenderOptions {
  uint32_t width = 1280;
  uint32_t height = 720;
  // Each cube's half edge in its entity's local units (its LocalToWorld scales it).
  float half_size = 1.0f;
  // PropagatorOptions::max_buffer_bytes: 0 the device's limit; lower, the output in several
  // pieces, each drawn on its own.
  uint64_t max_buffer_bytes = 0;
  // PropagatorOptions::output_layout: the vertex shader reads either (the same image).
  OutputLayout output_layout = OutputLayout::Float4x4;
};

struct RenderedImage {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgba;  // row-major, top row first
  float4x4 view_proj;         // world -> Vulkan clip space, as drawn
  std::string device_name;
};

// The background colour the renderer clears to (8-bit RGBA), for tests that look for entities.
inline constexpr uint8_t kBackground[4] = {13, 18, 28, 255};

// Propagates the scene on the GPU and draws it, framed by the bounds of the entities' world
// positions. Consumes the store's pending changes like any frame would.
Result<RenderedImage> render_scene(Scene& scene, const RenderOptions& options);

Status write_png(const std::string& path, const RenderedImage& image);

// A camera that frames the bulk of the points from above and in front.
struct Framing {
  float4x4 view_proj;  // world -> Vulkan clip space
  float3 center;       // of the framed points' bounds
  float radius;        // half the bounds' diagonal
};
Framing frame_points(const std::vector<float3>& points, float aspect);

}  // namespace tprop::sample
