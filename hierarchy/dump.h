// The dump: every entity's LocalToWorld as JSON, for diffing runs, backends and tools.
//   {"entities": [{"id": 3, "name": "earth", "localToWorld": [16 numbers, column-major]}, ...]}
// One entry per live entity in ascending id order; "name" only where the scene gave one. Numbers
// are printed as the shortest decimal that reads back as the same float ("0.1", "1e-07"), so
// every value round-trips exactly. JSON cannot spell inf or NaN: a non-finite matrix element
// (an overflowing scene) is written as null.
#pragma once

#include <cstdio>
#include <functional>
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

// The pieces every dump is written with (the world's too, dcl_world_dump.h): a JSON string
// literal, and a matrix as 16 shortest round-tripping numbers in column-major order, null for
// a non-finite element.
void append_json_string(std::string& out, const std::string& s);
void append_dump_matrix(std::string& out, const float4x4& m);

// Opens `path` with a buffer for millions of small writes, runs write(the stream), and closes
// it: a failed open or close (a full disk, a file size limit) is an error naming the path. Every
// file tprop writes goes through it (dumps, saved worlds).
Status write_dump_file(const std::string& path, const std::function<Status(std::FILE*)>& write);

}  // namespace tprop
