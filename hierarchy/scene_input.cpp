#include "scene_input.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>

#include "compose.h"
#include "dcl_scene.h"
#include "gltf_scene.h"
#include "scene_generators.h"
#include "scene_json.h"

namespace tprop {
namespace {

enum class FileFormat { Json, Gltf, Crdt, Unknown };

bool ends_with_ignoring_case(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  s.remove_prefix(s.size() - suffix.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char a = s[i] >= 'A' && s[i] <= 'Z' ? char(s[i] - 'A' + 'a') : s[i];
    if (a != suffix[i]) return false;
  }
  return true;
}

// The extension decides when there is a known one; otherwise the first bytes do, so that a
// scene piped through a temporary file without an extension still loads.
FileFormat detect_format(const std::string& path, std::string_view bytes) {
  if (ends_with_ignoring_case(path, ".json")) return FileFormat::Json;
  // Before the '{' sniff: a .gltf is JSON too.
  if (is_gltf_path(path) || looks_like_glb(bytes)) return FileFormat::Gltf;
  if (ends_with_ignoring_case(path, ".crdt")) return FileFormat::Crdt;
  // JSON text may start with a UTF-8 byte order mark (nlohmann skips it too).
  const size_t bom = bytes.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  const size_t first = bytes.find_first_not_of(" \t\r\n", bom);
  if (first != std::string_view::npos && bytes[first] == '{') return FileFormat::Json;
  // A Decentraland CRDT stream: its first message header is plausible.
  if (looks_like_crdt_stream({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}))
    return FileFormat::Crdt;
  return FileFormat::Unknown;
}

// What the transform rules will do with the loaded scene that its author should hear about once
// (generated scenes never carry ParentScaleInverse, so they skip this scan).
Result<Scene> with_rule_warnings(Result<Scene> loaded) {
  if (loaded) {
    if (std::optional<std::string> w = degenerate_scale_inverse_warning(loaded->store))
      loaded->warnings.push_back(std::move(*w));
  }
  return loaded;
}

}  // namespace

Result<std::string> read_file_bytes(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  // A device (/dev/zero, a terminal) may never end: only files and pipes are read. A directory
  // passes here and fails on the first read, below.
  struct stat st {};
  if (fstat(fileno(f.get()), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
    return Error{"cannot read " + path + ": a device, not a file or a pipe"};
  try {
    std::string bytes;
    char buffer[1 << 16];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f.get())) > 0) bytes.append(buffer, n);
    // A directory opens fine on Linux and fails on the first read (EISDIR).
    if (std::ferror(f.get())) return Error{"cannot read " + path + ": " + std::strerror(errno)};
    return bytes;
  } catch (const std::exception& e) {  // std::bad_alloc for a file larger than memory
    return Error{"cannot read " + path + ": " + e.what()};
  }
}

Result<Scene> load_scene(const std::string& spec, uint64_t seed) {
  try {
    // Generator specs ("gen:...") are dispatched here, before the spec is taken as a path.
    if (is_generator_spec(spec)) return generate_scene(spec, seed);

    // "-" is standard input (a pipe or a redirected file; a terminal is refused as a device),
    // named "<stdin>" in messages; its format is told by its first bytes.
    const bool from_stdin = spec == kStdinSpec;
    const std::string name = from_stdin ? "<stdin>" : spec;
    Result<std::string> bytes = read_file_bytes(from_stdin ? "/dev/stdin" : spec);
    if (!bytes && from_stdin) return Error{"standard input: " + bytes.error().message};
    if (!bytes) return bytes.error();
    switch (detect_format(name, *bytes)) {
      case FileFormat::Json: return with_rule_warnings(parse_scene_json(*bytes, name));
      case FileFormat::Gltf: return with_rule_warnings(parse_gltf_scene(*bytes, name));
      case FileFormat::Crdt:
        return with_rule_warnings(load_crdt_scene_from_bytes(
            {reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}, name));
      case FileFormat::Unknown: break;
    }
    return Error{name +
                 ": unknown scene format (expected a .json scene, a .gltf or .glb file, a "
                 "Decentraland .crdt stream, or a gen: spec)"};
  } catch (const std::exception& e) {  // std::bad_alloc while parsing
    return Error{spec + ": " + e.what()};
  }
}

}  // namespace tprop
