// `tprop render [SCENE] -o out.png [--size WxH] [--seed N] [--cube-size S]`: propagate a scene on the GPU and
// draw one cube per entity with the renderer sample (samples/render_scene.h).
#pragma once

#include <string>
#include <vector>

namespace tprop::cli {

const char* render_usage();

// Runs `tprop render` with the arguments that follow "render". Returns the exit code.
int render_command(const std::vector<std::string>& args);

}  // namespace tprop::cli
