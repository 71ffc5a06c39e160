// glTF 2.0 scene input (.gltf and .glb), read through tinygltf: only the node hierarchy is used.
//
// Mapping, node by node (entity id = node index, name = node name when not empty):
// - translation -> Translation, rotation (x, y, z, w, as in glTF) -> Rotation, scale ->
//   NonUniformScale; only the properties the node has. No ParentScaleInverse: glTF children
//   inherit their parent's scale, which is what the rules give without one.
// - matrix -> a user-written matrix with no transform source, which the rules keep as is: on a
//   root it is the LocalToWorld; on a child it is the LocalToParent, and also written as the
//   LocalToWorld so that a child whose parent link is broken by a cycle (and so stands at the
//   root, as if it had no Parent) still gets its own matrix as its world transform.
// - children -> Parent. Nodes that are in no scene are still entities (roots).
// Local matrices then compose exactly as glTF says: world = parent world * T * R * S (or M).
//
// Errors (each names the file and the place): unreadable or oversized file, malformed JSON,
// JSON nested absurdly deep, a bad .glb header, no nodes or no scene at all, a property of the
// wrong JSON type or length (name, matrix, translation, rotation, scale, children, scenes,
// scene), a number too large for a float, a child or scene node index out of range, a node
// listed as a child twice or by two parents, a buffer that gltf_buffers.h refuses (missing, of
// another size than its byteLength, undecodable base64, or a uri leading outside the file's
// folder), and whatever tinygltf rejects in the rest. Buffers are checked, never read or decoded.
// Warned repairs (Scene::warnings): a node that is its own ancestor (a cycle in children) keeps
// its edges and the depth sort breaks the cycle as everywhere else; a rotation whose length is
// off 1 by more than 1e-3 is used as given; a node with both matrix and TRS uses the matrix; a
// scene root that has a parent is just a child; an asset.version other than 2.x is read as 2.0.
// Images are never decoded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "result.h"
#include "scene.h"

namespace tprop {

// Guards against inputs that would only exhaust memory: a .glb may be large (its BIN chunk is
// mostly mesh data, never read); the JSON (a .gltf, or a .glb's JSON
// chunk) is parsed into trees several times its size.
inline constexpr uint64_t kMaxGltfFileBytes = uint64_t(2) << 30;
inline constexpr uint64_t kMaxGltfJsonBytes = uint64_t(256) << 20;
inline constexpr uint32_t kMaxGltfNodes = 16u << 20;
inline constexpr int kMaxGltfJsonDepth = 128;

// Whether path ends in .gltf or .glb (any case).
bool is_gltf_path(std::string_view path);
// Whether bytes start like a .glb file (the "glTF" magic).
bool looks_like_glb(std::string_view bytes);

// Loads a .gltf or .glb file; the format is told by the first bytes, not the extension.
Result<Scene> load_gltf_scene(const std::string& path);
// The same for a file's content already in memory; path names it in messages and locates the
// external buffers (relative to its folder). Scene::source is path.
Result<Scene> parse_gltf_scene(std::string_view bytes, const std::string& path);

}  // namespace tprop
