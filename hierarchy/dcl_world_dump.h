// The dump of a Decentraland world: every entity's LocalToWorld keyed by (scene, entity), so a
// world run can be diffed against single-scene runs of the same streams, another backend, or
// another run:
//   {"frames": 20, "scenes": [
//     {"name": "plaza", "slot": 0, "parcel": [-9, 73], "entities": [
//       {"id": 0, "localToWorld": [16 numbers, column-major]},
//       {"id": 512, "localToWorld": [...]},
//       {"id": 66048, "localToWorld": [...]}]},
//     ...]}
// "frames" is how many frames were replayed: the matrices are those after the last one. Scenes
// come in the order given (the world's manifest order), the loaded ones only; "slot" is the
// scene's slot in the store (store id = slot * 65536 + entity number, what --validate names).
// Within a scene, entities in ascending id order under the scene's own ids (number in the low
// 16 bits, version in the high 16), the ids a single-scene dump of the same stream lists; id 0
// is the scene root, placed at its parcel. Only entities the store holds are listed (a
// shadowed version, dcl_world.h, is not). Numbers are written as in dump.h: the shortest
// decimal that reads back as the same float, null where not finite.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "dcl_world.h"
#include "depth_order.h"
#include "math.h"
#include "result.h"

namespace tprop {

// `order` is a depth order of the world's store and `local_to_world` holds one matrix per
// position of it (CpuReference::evaluate's output, or a GPU read-back put in that order).
Status write_world_dump(std::FILE* out, const std::string& name, const DclWorld& world,
                        std::span<const DclWorld::SceneId> scenes, uint32_t frames,
                        const DepthOrder& order, const std::vector<float4x4>& local_to_world);
Status write_world_dump(const std::string& path, const DclWorld& world,
                        std::span<const DclWorld::SceneId> scenes, uint32_t frames,
                        const DepthOrder& order, const std::vector<float4x4>& local_to_world);

}  // namespace tprop
