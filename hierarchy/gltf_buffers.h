// Checking a glTF document's buffers without reading them. tprop needs only the nodes, so a
// buffer is checked to exist with its declared byteLength and is never loaded or decoded:
//  - no uri: the .glb's BIN chunk (at least byteLength bytes);
//  - a data: URI: base64, its decoded length (counted, not decoded) equal to byteLength;
//  - otherwise a relative path (percent-decoded) that must stay inside the glTF file's folder
//    after `..` and symlinks are resolved, naming a regular file of exactly byteLength bytes.
//    Absolute paths and URIs with a scheme (file://, http://) are refused: a scene file must not
//    be able to read, or probe the size of, files outside its folder.
// Every message is one short line naming buffers[i]; a data URI is never echoed.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "result.h"

namespace tprop {

// `doc` is the parsed glTF JSON; `gltf_path` the file it came from (its folder is the root of
// the relative URIs); `glb_bin_bytes` the size of the .glb's BIN chunk, nullopt for glTF text
// or a .glb without one. The error message does not name the file (the caller prefixes it).
Status check_gltf_buffers(const nlohmann::json& doc, const std::string& gltf_path,
                          std::optional<uint64_t> glb_bin_bytes);

}  // namespace tprop
