// The renderer sample draws each entity where the CPU reference puts it: render a small known
// scene on the device (lavapipe in CI) and look at the pixels where the hand-derived world
// positions project.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "render_scene.h"
#include "scene_input.h"

namespace tprop {
namespace {

bool gpu_required() {
  const char* v = std::getenv("TPROP_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

struct Pixel {
  int x, y;
  bool inside;
};

Pixel project(const sample::RenderedImage& image, float3 world) {
  const float4 clip = image.view_proj * float4(world, 1.0f);
  const float nx = clip.x / clip.w, ny = clip.y / clip.w;
  const int x = int(std::floor((nx * 0.5f + 0.5f) * float(image.width)));
  const int y = int(std::floor((ny * 0.5f + 0.5f) * float(image.height)));
  return {x, y, clip.w > 0 && x >= 0 && y >= 0 && x < int(image.width) && y < int(image.height)};
}

bool is_background(const sample::RenderedImage& image, Pixel p) {
  const uint8_t* px = &image.rgba[(size_t(p.y) * image.width + size_t(p.x)) * 4];
  for (int c = 0; c < 3; ++c)
    if (std::abs(int(px[c]) - int(sample::kBackground[c])) > 2) return false;
  return true;
}

// Three roots on the x axis and, below the third (turned 90 degrees about z), a child translated
// by (2, 0, 0): the propagated child stands at (3, 2, 0); a renderer that ignored the parent
// would draw it at (2, 0, 0), between the second and third roots.
Scene known_scene() {
  Scene scene;
  EntityStore& s = scene.store;
  for (EntityId e : {1, 2, 3, 4}) s.create(e);
  s.set_translation(1, float3(-3, 0, 0));
  s.set_translation(2, float3(0, 0, 0));
  s.set_translation(3, float3(3, 0, 0));
  const float h = std::sqrt(0.5f);
  s.set_rotation(3, make_quat(0, 0, h, h));
  s.set_translation(4, float3(2, 0, 0));
  s.set_parent(4, 3);
  return scene;
}

TEST(RenderSample, DrawsEveryEntityWhereTheReferencePutsIt) {
  Scene scene = known_scene();
  sample::RenderOptions options;
  options.width = 320;
  options.height = 240;
  options.half_size = 0.4f;
  Result<sample::RenderedImage> image = sample::render_scene(scene, options);
  if (!image) {
    if (gpu_required()) FAIL() << "TPROP_REQUIRE_GPU=1 but rendering failed: " << image.error().message;
    GTEST_SKIP() << "no Vulkan device to render on: " << image.error().message;
  }
  ASSERT_EQ(image->rgba.size(), size_t(320 * 240 * 4));
  for (float3 world : {float3(-3, 0, 0), float3(0, 0, 0), float3(3, 0, 0), float3(3, 2, 0)}) {
    const Pixel p = project(*image, world);
    ASSERT_TRUE(p.inside) << "(" << world.x << ", " << world.y << ", " << world.z << ") off screen";
    EXPECT_FALSE(is_background(*image, p))
        << "nothing drawn at (" << world.x << ", " << world.y << ", " << world.z << ") -> pixel "
        << p.x << ", " << p.y;
  }
  // Where the child would be without propagation, and the image corners: background.
  for (Pixel p : {project(*image, float3(2, 0, 0)), Pixel{0, 0, true}, Pixel{319, 239, true}}) {
    ASSERT_TRUE(p.inside);
    EXPECT_TRUE(is_background(*image, p)) << "unexpected drawing at pixel " << p.x << ", " << p.y;
  }
}

TEST(RenderSample, RejectsAnImpossibleImageSize) {
  Scene scene = known_scene();
  sample::RenderOptions options;
  options.width = 0;
  Result<sample::RenderedImage> image = sample::render_scene(scene, options);
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message.find("0x720"), std::string::npos) << image.error().message;
}

// An output in pieces (16 KiB buffers: 256 slots each) is drawn piece by piece, with the same
// instances in the same places and colours as from one buffer: the same pixels.
TEST(RenderSample, AnOutputInPiecesDrawsTheSameImageAsOneBuffer) {
  sample::RenderOptions options;
  options.width = 240;
  options.height = 160;
  Result<Scene> one = load_scene("gen:forest:1500:4", 7);
  ASSERT_TRUE(one.ok()) << one.error().message;
  Result<sample::RenderedImage> whole = sample::render_scene(*one, options);
  if (!whole) {
    if (gpu_required()) FAIL() << "TPROP_REQUIRE_GPU=1 but rendering failed: " << whole.error().message;
    GTEST_SKIP() << "no Vulkan device to render on: " << whole.error().message;
  }
  Result<Scene> again = load_scene("gen:forest:1500:4", 7);
  ASSERT_TRUE(again.ok());
  options.max_buffer_bytes = 16384;
  Result<sample::RenderedImage> pieces = sample::render_scene(*again, options);
  ASSERT_TRUE(pieces.ok()) << pieces.error().message;
  ASSERT_EQ(pieces->rgba.size(), whole->rgba.size());
  size_t drawn = 0, differing = 0;
  for (size_t px = 0; px < whole->rgba.size() / 4; ++px) {
    const sample::RenderedImage& w = *whole;
    drawn += !is_background(w, Pixel{int(px % w.width), int(px / w.width), true});
    differing += std::memcmp(&w.rgba[4 * px], &pieces->rgba[4 * px], 4) != 0;
  }
  EXPECT_GT(drawn, 1000u) << "the forest covers part of the image";
  EXPECT_EQ(differing, 0u);
}

// The vertex shader reads the Affine3x4 output (three rows an instance) into the same matrices
// as the float4x4 one, in one buffer and in pieces: the same pixels.
TEST(RenderSample, AnAffineOutputDrawsTheSameImageAsAFloat4x4One) {
  sample::RenderOptions options;
  options.width = 240;
  options.height = 160;
  Result<Scene> full = load_scene("gen:forest:1500:4", 9);
  ASSERT_TRUE(full.ok()) << full.error().message;
  Result<sample::RenderedImage> reference = sample::render_scene(*full, options);
  if (!reference) {
    if (gpu_required()) FAIL() << "TPROP_REQUIRE_GPU=1 but rendering failed: " << reference.error().message;
    GTEST_SKIP() << "no Vulkan device to render on: " << reference.error().message;
  }
  options.output_layout = OutputLayout::Affine3x4;
  for (uint64_t max_buffer_bytes : {uint64_t(0), uint64_t(16384)}) {
    SCOPED_TRACE(max_buffer_bytes ? "in pieces" : "one buffer");
    options.max_buffer_bytes = max_buffer_bytes;
    Result<Scene> scene = load_scene("gen:forest:1500:4", 9);
    ASSERT_TRUE(scene.ok());
    Result<sample::RenderedImage> rows = sample::render_scene(*scene, options);
    ASSERT_TRUE(rows.ok()) << rows.error().message;
    ASSERT_EQ(rows->rgba.size(), reference->rgba.size());
    size_t drawn = 0, differing = 0;
    for (size_t px = 0; px < reference->rgba.size() / 4; ++px) {
      const sample::RenderedImage& r = *reference;
      drawn += !is_background(r, Pixel{int(px % r.width), int(px / r.width), true});
      differing += std::memcmp(&r.rgba[4 * px], &rows->rgba[4 * px], 4) != 0;
    }
    EXPECT_GT(drawn, 1000u) << "the forest covers part of the image";
    EXPECT_EQ(differing, 0u);
  }
}

}  // namespace
}  // namespace tprop
