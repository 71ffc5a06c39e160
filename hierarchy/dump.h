// The dump: every entity's LocalToWorld as JSON, for diffing runs, backends and tools.
//   {"entities": [{"id": 3, "name": "earth", "localToWorld": [16 numbers, column-major]}, ...]}
// One entry per live entity in ascending id order; "name" only where the scene gave one. Numbers
// are printed as the shortest decimal that reads back as the same float ("0.1", "1e-07"), so
// every value round-trips exactly. JSON cannot spell inf or NaN: a non-finite matrix element
// (an overflowing scene) is written as null.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "depth_order.h"
#include "math.h"
#include "result.h"
#include "scene.h"

namespace tprop {

// `order` is the depth order the matrices were computed in and `local_to_world` holds one matrix
// per position of it (CpuReference::evaluate's output).
Status write_dump(const std::string& path, const Scene& scene, const DepthOrder& order,
                  const std::vector<float4x4>& local_to_world);

// The same into an open stream; `name` names it in the error message.
Status write_dump(std::FILE* out, const std::string& name, const Scene& scene,
                  const DepthOrder& order, const std::vector<float4x4>& local_to_world);

}  // namespace tprop
