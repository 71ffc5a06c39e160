#include "gltf_scene.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

// tprop only needs nodes: no image decoding (no stb_image), no image files read.
#define TINYGLTF_IMPLEMENTATION
#define TINYGLTF_NO_STB_IMAGE
#define TINYGLTF_NO_STB_IMAGE_WRITE
#define TINYGLTF_NO_EXTERNAL_IMAGE
#include <tiny_gltf.h>

#include "gltf_buffers.h"
#include "json_syntax_error.h"

namespace tprop {
namespace {

using nlohmann::json;
constexpr uint32_t kNoParent = 0xffffffffu;

// At most this many warnings of one kind are listed one by one; the rest are counted.
constexpr size_t kWarningsPerKind = 10;

class Warnings {
 public:
  explicit Warnings(std::string file) : file_(std::move(file)) {}
  void add(int kind, const std::string& message) {
    if (kind >= int(counts_.size())) counts_.resize(size_t(kind) + 1);
    if (++counts_[size_t(kind)] <= kWarningsPerKind) out_.push_back(file_ + ": " + message);
  }
  std::vector<std::string> take() {
    for (size_t n : counts_) {
      if (n > kWarningsPerKind) {
        out_.push_back(file_ + ": ... and " + std::to_string(n - kWarningsPerKind) +
                       " more warnings like the ones above");
      }
    }
    return std::move(out_);
  }

 private:
  std::string file_;
  std::vector<size_t> counts_;
  std::vector<std::string> out_;
};
enum WarningKind {
  kCycle,
  kRotationLength,
  kMatrixAndTrs,
  kSceneRootWithParent,
  kTinygltf,
  kVersion
};

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  return out;
}

// Reads a regular file of at most kMaxGltfFileBytes. Anything else (a FIFO, a device, a
// directory) is refused up front so that a buffer URI can never make the loader block or read
// forever.
Result<std::string> read_regular_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec) return Error{"cannot open " + path + ": " + ec.message()};
  if (!std::filesystem::is_regular_file(st))
    return Error{"cannot read " + path + ": not a regular file"};
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Error{"cannot read " + path + ": " + ec.message()};
  if (size > kMaxGltfFileBytes) {
    return Error{path + " is " + std::to_string(size) + " bytes, more than the " +
                 std::to_string(kMaxGltfFileBytes) + " a glTF file may have"};
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  std::string bytes;
  try {
    bytes.resize(size_t(size));  // up to kMaxGltfFileBytes
  } catch (const std::bad_alloc&) {
    return out_of_memory_error("out of host memory reading a glTF file");
  }
  const size_t got = std::fread(bytes.data(), 1, bytes.size(), f.get());
  if (got != bytes.size() || std::ferror(f.get())) {
    return Error{"cannot read " + path + ": " +
                 (std::ferror(f.get()) ? std::strerror(errno) : "file shrank while read")};
  }
  return bytes;
}

// tinygltf's file access, routed through read_regular_file.
bool fs_file_exists(const std::string& path, void*) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}
std::string fs_expand_path(const std::string& path, void*) { return path; }
bool fs_read_whole_file(std::vector<unsigned char>* out, std::string* err, const std::string& path,
                        void*) {
  Result<std::string> bytes = read_regular_file(path);
  if (!bytes) {
    if (err) *err += bytes.error().message;
    return false;
  }
  out->assign(bytes->begin(), bytes->end());
  return true;
}
bool fs_write_whole_file(std::string* err, const std::string&, const std::vector<unsigned char>&,
                         void*) {
  if (err) *err += "tprop never writes glTF files";
  return false;
}
// Images are kept undecoded: tprop needs the node hierarchy only.
bool skip_image(tinygltf::Image*, const int, std::string*, std::string*, int, int,
                const unsigned char*, int, void*) {
  return true;
}

uint32_t read_u32_le(std::string_view bytes, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// The JSON chunk of a .glb (header: magic, version, length; then chunk length, type, data).
Result<std::string_view> glb_json_chunk(std::string_view bytes) {
  if (bytes.size() < 20)
    return Error{"truncated .glb: " + std::to_string(bytes.size()) + " bytes, a header needs 20"};
  const uint32_t version = read_u32_le(bytes, 4);
  if (version != 2)
    return Error{".glb container version " + std::to_string(version) + ", expected 2"};
  const uint32_t length = read_u32_le(bytes, 8);
  if (length > bytes.size()) {
    return Error{"truncated .glb: the header says " + std::to_string(length) +
                 " bytes, the file has " + std::to_string(bytes.size())};
  }
  const uint32_t chunk_length = read_u32_le(bytes, 12);
  if (read_u32_le(bytes, 16) != 0x4E4F534Au) return Error{".glb: the first chunk is not JSON"};
  if (uint64_t(chunk_length) + 20 > length) {
    return Error{".glb: the JSON chunk (" + std::to_string(chunk_length) +
                 " bytes) runs past the end of the file"};
  }
  return bytes.substr(20, chunk_length);
}

// The size of a .glb's BIN chunk, the second chunk when there is one (nullopt without).
Result<std::optional<uint64_t>> glb_bin_chunk_bytes(std::string_view bytes) {
  const uint64_t length = read_u32_le(bytes, 8);  // glb_json_chunk checked it against the file
  const uint64_t at = 20 + uint64_t(read_u32_le(bytes, 12));
  if (at + 8 > length || read_u32_le(bytes, size_t(at + 4)) != 0x004E4942u)
    return std::optional<uint64_t>();
  const uint64_t chunk_length = read_u32_le(bytes, size_t(at));
  if (at + 8 + chunk_length > length) {
    return Error{".glb: the BIN chunk (" + std::to_string(chunk_length) +
                 " bytes) runs past the end of the file"};
  }
  return std::optional<uint64_t>(chunk_length);
}

// What tinygltf is given: the document without what tprop never reads (buffers, meshes, images,
// what refers to them, the top-level extras and extensions), so that it neither opens a buffer
// file nor decodes a data URI nor converts a large extras value a second time;
// check_gltf_buffers() has checked the buffers instead.
std::string nodes_only(json doc) {
  static constexpr const char* kKept[] = {"asset", "scene", "scenes", "nodes", "extensionsUsed",
                                          "extensionsRequired"};
  for (auto it = doc.begin(); it != doc.end();) {
    const bool kept = std::find(std::begin(kKept), std::end(kKept), it.key()) != std::end(kKept);
    it = kept ? std::next(it) : doc.erase(it);
  }
  return doc.dump();
}

// Deeply nested JSON would make tinygltf (which converts extras recursively) overflow the stack.
int json_depth(const json& root) {
  int deepest = 0;
  std::vector<std::pair<const json*, int>> stack{{&root, 1}};
  while (!stack.empty()) {
    const auto [v, d] = stack.back();
    stack.pop_back();
    deepest = std::max(deepest, d);
    if (d > kMaxGltfJsonDepth) break;
    if (v->is_structured()) {
      for (const json& child : *v) stack.emplace_back(&child, d + 1);
    }
  }
  return deepest;
}

// "an object", "a string", ... for messages.
std::string a_type(const json& v) {
  const std::string name = v.type_name();
  return (name == "object" || name == "array" ? "an " : "a ") + name;
}

// A fixed-length array of numbers a float can hold, or an Error naming where.
Result<std::vector<double>> number_array(const json& node, const char* key, size_t count,
                                         const std::string& where) {
  const json& v = node.at(key);
  if (!v.is_array() || v.size() != count) {
    return Error{where + "." + key + " must be an array of " + std::to_string(count) +
                 " numbers, not " +
                 (v.is_array() ? "an array of " + std::to_string(v.size()) : a_type(v))};
  }
  std::vector<double> out;
  for (size_t i = 0; i < count; ++i) {
    if (!v[i].is_number()) {
      return Error{where + "." + key + "[" + std::to_string(i) + "] must be a number, not " +
                   a_type(v[i])};
    }
    const double d = v[i].get<double>();
    if (!std::isfinite(d) || std::abs(d) > double(FLT_MAX)) {
      return Error{where + "." + key + "[" + std::to_string(i) + "] = " + v[i].dump() +
                   " does not fit in a 32-bit float"};
    }
    out.push_back(d);
  }
  return out;
}

// A node index: a non-negative JSON integer below node_count.
Result<uint32_t> node_index(const json& v, size_t node_count, const std::string& where) {
  if (!v.is_number_integer()) {
    return Error{where + " must be a node index (an integer), not " +
                 (v.is_number() ? v.dump() : a_type(v))};
  }
  if (!v.is_number_unsigned() || v.get<uint64_t>() >= node_count) {
    return Error{where + " = " + v.dump() + " is out of range: the file has " +
                 std::to_string(node_count) + " nodes (0.." + std::to_string(node_count - 1) + ")"};
  }
  return static_cast<uint32_t>(v.get<uint64_t>());
}

std::string node_label(const json& node, uint32_t i) {
  std::string s = "node " + std::to_string(i);
  const auto name = node.find("name");
  if (name != node.end() && name->is_string() && !name->get_ref<const std::string&>().empty()) {
    s += " ('" + name->get<std::string>() + "')";
  }
  return s;
}

// Checks, against the raw JSON, everything about nodes and scenes that tinygltf would silently
// ignore or accept (it skips properties of the wrong type), and returns each node's parent.
Result<std::vector<uint32_t>> check_nodes_and_scenes(const json& doc, Warnings& warnings) {
  if (!doc.is_object()) return Error{"the top level is not a JSON object but " + a_type(doc)};
  // glTF 1.0 keeps nodes in an object (an error below); a 1.0 file laid out as 2.0 still loads.
  const auto asset = doc.find("asset");
  if (asset != doc.end() && asset->is_object()) {
    const auto version = asset->find("version");
    if (version != asset->end() && version->is_string() &&
        version->get_ref<const std::string&>().rfind("2.", 0) != 0) {
      warnings.add(kVersion, "asset.version is \"" + version->get<std::string>() +
                                 "\"; tprop reads glTF 2.0 and reads this file as 2.0");
    }
  }
  const auto nodes_it = doc.find("nodes");
  if (nodes_it == doc.end()) return Error{"no nodes at all ('nodes' is missing)"};
  const json& nodes = *nodes_it;
  if (!nodes.is_array()) return Error{"'nodes' must be an array, not " + a_type(nodes)};
  if (nodes.empty()) return Error{"no nodes at all ('nodes' is empty)"};
  if (nodes.size() > kMaxGltfNodes) {
    return Error{std::to_string(nodes.size()) + " nodes, more than the " +
                 std::to_string(kMaxGltfNodes) + " a glTF input may have"};
  }
  const auto scenes_it = doc.find("scenes");
  if (scenes_it == doc.end()) return Error{"no scene at all ('scenes' is missing)"};
  if (!scenes_it->is_array()) return Error{"'scenes' must be an array, not " + a_type(*scenes_it)};
  if (scenes_it->empty()) return Error{"no scene at all ('scenes' is empty)"};

  const size_t n = nodes.size();
  std::vector<uint32_t> parent(n, kNoParent);
  for (uint32_t i = 0; i < n; ++i) {
    const json& node = nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!node.is_object()) return Error{where + " must be an object, not " + a_type(node)};
    if (node.contains("name") && !node["name"].is_string()) {
      return Error{where + ".name must be a string, not " + a_type(node["name"])};
    }
    static constexpr std::pair<const char*, size_t> kArrays[] = {
        {"matrix", 16}, {"translation", 3}, {"rotation", 4}, {"scale", 3}};
    for (const auto& [key, count] : kArrays) {
      if (!node.contains(key)) continue;
      Result<std::vector<double>> values = number_array(node, key, count, where);
      if (!values) return values.error();
      if (std::string_view(key) == "rotation") {
        const std::vector<double>& q = *values;
        const double len = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (std::abs(len - 1.0) > 1e-3) {
          warnings.add(kRotationLength, node_label(node, i) + ": rotation has length " +
                                            std::to_string(len) +
                                            ", not 1; used as given, not normalized");
        }
      }
    }
    if (node.contains("matrix") &&
        (node.contains("translation") || node.contains("rotation") || node.contains("scale"))) {
      warnings.add(kMatrixAndTrs, node_label(node, i) +
                                      " has both a matrix and translation/rotation/scale, which "
                                      "glTF forbids; the matrix is used");
    }
    if (!node.contains("children")) continue;
    const json& children = node["children"];
    if (!children.is_array()) {
      return Error{where + ".children must be an array of node indices, not " + a_type(children)};
    }
    for (size_t k = 0; k < children.size(); ++k) {
      Result<uint32_t> c =
          node_index(children[k], n, where + ".children[" + std::to_string(k) + "]");
      if (!c) return c.error();
      if (parent[*c] == i) {
        return Error{where + ".children lists node " + std::to_string(*c) + " twice"};
      }
      if (parent[*c] != kNoParent) {
        return Error{"node " + std::to_string(*c) + " is a child of two parents, node " +
                     std::to_string(parent[*c]) + " and node " + std::to_string(i) +
                     " (glTF nodes form trees)"};
      }
      parent[*c] = i;
    }
  }

  const json& scenes = *scenes_it;
  for (size_t s = 0; s < scenes.size(); ++s) {
    const std::string where = "scenes[" + std::to_string(s) + "]";
    if (!scenes[s].is_object())
      return Error{where + " must be an object, not " + a_type(scenes[s])};
    if (!scenes[s].contains("nodes")) continue;
    const json& roots = scenes[s]["nodes"];
    if (!roots.is_array()) {
      return Error{where + ".nodes must be an array of node indices, not " + a_type(roots)};
    }
    for (size_t k = 0; k < roots.size(); ++k) {
      Result<uint32_t> r = node_index(roots[k], n, where + ".nodes[" + std::to_string(k) + "]");
      if (!r) return r.error();
      if (parent[*r] != kNoParent) {
        warnings.add(kSceneRootWithParent, where + " lists " + node_label(nodes[*r], *r) +
                                               " as a root, but it is a child of node " +
                                               std::to_string(parent[*r]) + "; it stays a child");
      }
    }
  }
  if (doc.contains("scene")) {
    const json& scene = doc["scene"];
    if (!scene.is_number_unsigned() || scene.get<uint64_t>() >= scenes.size()) {
      return Error{"'scene' = " + scene.dump() + " must be the index of one of the " +
                   std::to_string(scenes.size()) + " scenes"};
    }
  }
  return parent;
}

// Each cycle in the parent links, as its members in ascending order. Every node is walked once
// (0 unseen, 1 on the current walk, 2 done), so this is O(nodes).
std::vector<std::vector<uint32_t>> find_cycles(const std::vector<uint32_t>& parent) {
  std::vector<std::vector<uint32_t>> cycles;
  std::vector<uint8_t> state(parent.size(), 0);
  std::vector<uint32_t> walk;
  for (uint32_t start = 0; start < parent.size(); ++start) {
    walk.clear();
    uint32_t cur = start;
    while (cur != kNoParent && state[cur] == 0) {
      state[cur] = 1;
      walk.push_back(cur);
      cur = parent[cur];
    }
    if (cur != kNoParent && state[cur] == 1) {
      const auto first = std::find(walk.begin(), walk.end(), cur);
      std::vector<uint32_t> members(first, walk.end());
      std::sort(members.begin(), members.end());
      cycles.push_back(std::move(members));
    }
    for (uint32_t w : walk) state[w] = 2;
  }
  return cycles;
}

std::string list_nodes(const std::vector<uint32_t>& ids) {
  constexpr size_t kShown = 16;
  std::string s;
  for (size_t i = 0; i < ids.size() && i < kShown; ++i)
    s += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > kShown) s += ", ... (" + std::to_string(ids.size()) + " nodes)";
  return s;
}

float4x4 column_major(const std::vector<double>& m) {
  float4x4 out;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) out[c][r] = static_cast<float>(m[size_t(c * 4 + r)]);
  return out;
}

float3 vec3(const std::vector<double>& v) {
  return float3(static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]));
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

Result<Scene> parse_unguarded(std::string_view bytes, const std::string& path) {
  if (bytes.size() > kMaxGltfFileBytes) {
    return Error{path + ": " + std::to_string(bytes.size()) + " bytes, more than the " +
                 std::to_string(kMaxGltfFileBytes) + " a glTF file may have"};
  }
  const bool binary = looks_like_glb(bytes);
  // A .glb without the magic that is not glTF JSON text either: say so, rather than report the
  // first binary byte as malformed JSON.
  if (!binary && lowercase(std::filesystem::path(path).extension().string()) == ".glb") {
    const size_t first = bytes.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (first == std::string_view::npos || bytes[first] != '{')
      return Error{path + ": not a .glb file: it does not start with the \"glTF\" magic"};
  }
  std::string_view json_text = bytes;
  std::optional<uint64_t> bin_bytes;
  if (binary) {
    Result<std::string_view> chunk = glb_json_chunk(bytes);
    if (!chunk) return Error{path + ": " + chunk.error().message};
    json_text = *chunk;
    Result<std::optional<uint64_t>> bin = glb_bin_chunk_bytes(bytes);
    if (!bin) return Error{path + ": " + bin.error().message};
    bin_bytes = *bin;
  }
  // Parsed JSON takes several times its size in memory, twice over (here and in tinygltf).
  if (json_text.size() > kMaxGltfJsonBytes) {
    return Error{path + ": the JSON is " + std::to_string(json_text.size()) +
                 " bytes, more than the " + std::to_string(kMaxGltfJsonBytes) +
                 " a glTF input may have"};
  }

  // Our own pass over the JSON first: tinygltf skips mistyped properties without a word.
  Warnings warnings(path);
  std::vector<uint32_t> parent;
  std::string tinygltf_text;
  {
    json doc;
    try {
      doc = json::parse(json_text.begin(), json_text.end());
    } catch (const json::parse_error& e) {
      // In a .glb, the line and column are those of the JSON chunk's text.
      return Error{malformed_json_message(binary ? path + " (JSON chunk)" : path, json_text,
                                          e.byte, e.what())};
    } catch (const json::exception& e) {
      return Error{path + ": malformed JSON: " + strip_nlohmann_prefix(e.what())};
    }
    if (json_depth(doc) > kMaxGltfJsonDepth) {
      return Error{path + ": JSON nested deeper than " + std::to_string(kMaxGltfJsonDepth) +
                   " levels"};
    }
    Result<std::vector<uint32_t>> checked = check_nodes_and_scenes(doc, warnings);
    if (!checked) return Error{path + ": " + checked.error().message};
    parent = std::move(checked).value();
    if (Status buffers = check_gltf_buffers(doc, path, bin_bytes); !buffers)
      return Error{path + ": " + buffers.error().message};
    tinygltf_text = nodes_only(std::move(doc));
  }  // the document is freed before tinygltf parses its own copy

  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(&skip_image, nullptr);
  loader.SetFsCallbacks(tinygltf::FsCallbacks{&fs_file_exists, &fs_expand_path, &fs_read_whole_file,
                                              &fs_write_whole_file, nullptr});
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  tinygltf::Model model;
  std::string err, warn;
  const bool loaded = loader.LoadASCIIFromString(&model, &err, &warn, tinygltf_text.data(),
                                                 static_cast<unsigned int>(tinygltf_text.size()),
                                                 base_dir);
  tinygltf_text = std::string();
  if (!loaded) {
    std::string message;
    for (const std::string& line : lines(err)) message += (message.empty() ? "" : "; ") + line;
    return Error{path + ": " + (message.empty() ? "tinygltf rejected the file" : message)};
  }
  for (const std::string& line : lines(err + "\n" + warn))
    warnings.add(kTinygltf, "tinygltf: " + line);
  assert(model.nodes.size() == parent.size());

  for (const std::vector<uint32_t>& cycle : find_cycles(parent)) {
    const std::string who = cycle.size() == 1
                                ? "node " + list_nodes(cycle) + " is its own parent"
                                : "nodes " + list_nodes(cycle) + " are their own ancestors";
    warnings.add(kCycle, who +
                             " (a cycle in 'children'); the links are kept and the cycle is "
                             "broken as everywhere else: these nodes stand at the root while it "
                             "lasts");
  }

  Scene scene;
  scene.source = path;
  EntityStore& store = scene.store;
  const uint32_t n = static_cast<uint32_t>(model.nodes.size());
  store.reserve(n);
  for (EntityId i = 0; i < n; ++i) store.create(i);
  for (EntityId i = 0; i < n; ++i) {
    const tinygltf::Node& node = model.nodes[i];
    if (!node.name.empty()) scene.names.emplace(i, node.name);
    if (node.matrix.size() == 16) {
      const float4x4 m = column_major(node.matrix);
      store.set_matrix(i, MatrixComponent::LocalToWorld, m);
      if (parent[i] != kNoParent) store.set_matrix(i, MatrixComponent::LocalToParent, m);
      continue;
    }
    if (node.translation.size() == 3) store.set_translation(i, vec3(node.translation));
    if (node.rotation.size() == 4) {
      const std::vector<double>& q = node.rotation;
      store.set_rotation(i, make_quat(float(q[0]), float(q[1]), float(q[2]), float(q[3])));
    }
    if (node.scale.size() == 3) store.set_non_uniform_scale(i, vec3(node.scale));
  }
  for (EntityId i = 0; i < n; ++i) {
    if (parent[i] != kNoParent) store.set_parent(i, parent[i]);
  }
  scene.warnings = warnings.take();
  return scene;
}

}  // namespace

bool is_gltf_path(std::string_view path) {
  const std::string p = lowercase(path.substr(path.size() >= 5 ? path.size() - 5 : 0));
  return p.ends_with(".gltf") || p.ends_with(".glb");
}

bool looks_like_glb(std::string_view bytes) { return bytes.substr(0, 4) == "glTF"; }

Result<Scene> parse_gltf_scene(std::string_view bytes, const std::string& path) {
  // tinygltf and nlohmann throw (std::bad_alloc, std::out_of_range on some malformed buffers):
  // nothing crosses tprop's API.
  try {
    return parse_unguarded(bytes, path);
  } catch (const std::exception& e) {
    return Error{path + ": cannot load the glTF file: " + e.what()};
  } catch (...) {
    return Error{path + ": cannot load the glTF file: unknown failure"};
  }
}

Result<Scene> load_gltf_scene(const std::string& path) {
  Result<std::string> bytes = read_regular_file(path);
  if (!bytes) return bytes.error();
  return parse_gltf_scene(*bytes, path);
}

}  // namespace tprop
