#include "cli_render.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "cli_args.h"
#include "cli_progress.h"
#include "cli_run.h"
#include "render_scene.h"
#include "scene_input.h"

namespace tprop::cli {
namespace {

constexpr uint32_t kMaxSide = 16384;  // render_scene's limit

// Fails early, before loading and rendering, when the PNG could not be written: its folder
// is missing or not writable, or the path is a folder.
Status check_writable(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  std::error_code ec;
  // An existing file (or a device such as /dev/stdout) needs only to be writable itself.
  const bool existing_file = std::filesystem::exists(path, ec) &&
                             !std::filesystem::is_directory(path, ec) &&
                             access(path.c_str(), W_OK) == 0;
  if (!existing_file && access(dir.c_str(), W_OK) != 0) {
    return Error{"cannot write " + path + ": " + std::strerror(errno) + " (folder " + dir + ")"};
  }
  if ((!path.empty() && path.back() == '/') || std::filesystem::is_directory(path, ec))
    return Error{"cannot write " + path + ": it is a folder"};
  return ok_status();
}

}  // namespace

const char* render_usage() {
  return "usage: tprop render [SCENE] -o OUT.png [--size WxH] [--seed N] [--cube-size S]\n"
         "                    [--max-buffer-bytes B] [--output-layout 4x4|3x4]\n"
         "\n"
         "Propagates SCENE (default: the bundled solar system) on the GPU and draws one cube\n"
         "per entity, scaled and oriented by its LocalToWorld, read straight from tprop's\n"
         "output buffer; the camera frames the scene. Writes a PNG.\n"
         "\n"
         "  SCENE          as for `tprop run` (a .json, .gltf/.glb, .crdt file or gen: spec)\n"
         "  -o, --output   the PNG to write (required)\n"
         "  --size WxH     the image size in pixels, 1 to 16384 a side (default 960x540)\n"
         "  --seed N       the seed of a generator spec (default 1)\n"
         "  --cube-size S  half the edge of each entity's cube, in its local units (each\n"
         "                 LocalToWorld scales it); default: the renderer sample's\n"
         "  --max-buffer-bytes B  tprop's largest buffer, as for `tprop run`: a smaller one\n"
         "                 splits the output into pieces, each drawn on its own\n"
         "  --output-layout L  tprop's LocalToWorld as 4x4 (default) or 3x4 affine rows, as for\n"
         "                 `tprop run`; the vertex shader reads either (the same image)\n"
         "  -h, --help     print this help\n"
         "\n"
         "The device is the first Vulkan device that does graphics and compute.\n"
         "exit status: 0 ok, 1 bad input, no device or unwritable output, 2 usage error\n";
}

int render_command(const std::vector<std::string>& args) {
  Result<RenderCommandOptions> parsed = parse_render_args(args);
  if (std::optional<int> exit = usage_or_help("render", parsed, render_usage())) return *exit;
  const RenderCommandOptions& options = *parsed;
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "tprop render: %s\n", message.c_str());
    return kExitFailure;
  };
  if (options.width == 0 || options.height == 0 || options.width > kMaxSide ||
      options.height > kMaxSide) {
    return fail("image size " + std::to_string(options.width) + "x" +
                std::to_string(options.height) + " is out of range (1 to 16384 on each side)");
  }
  if (Status writable = check_writable(options.output); !writable)
    return fail(writable.error().message);

  Progress progress = Progress::for_stderr();
  const std::string spec = options.scene.empty() ? default_scene() : options.scene;
  progress.phase("loading " + spec);
  Result<Scene> scene = load_scene(spec, options.seed);
  progress.done();
  if (!scene) return fail(scene.error().message);
  for (const std::string& n : scene->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  for (const std::string& w : scene->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());

  progress.phase("rendering");
  sample::RenderOptions render_options;
  render_options.width = options.width;
  render_options.height = options.height;
  if (options.cube_size) render_options.half_size = *options.cube_size;
  render_options.max_buffer_bytes = options.max_buffer_bytes;
  render_options.output_layout = options.output_layout;
  Result<sample::RenderedImage> image = sample::render_scene(*scene, render_options);
  progress.done();
  if (!image) return fail(image.error().message);

  progress.phase("writing " + options.output);
  Status written = sample::write_png(options.output, *image);
  progress.done();
  if (!written) return fail(written.error().message);
  std::printf("rendered %s: %zu entities, %ux%u, on %s\n", options.output.c_str(),
              scene->store.size(), image->width, image->height, image->device_name.c_str());
  return kExitOk;
}

}  // namespace tprop::cli
