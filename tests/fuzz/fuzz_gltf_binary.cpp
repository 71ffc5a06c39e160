// libFuzzer harness: the .glb path of the glTF loader. Random bytes rarely get past the 12-byte
// header and the chunk table, so most inputs are wrapped into a container whose header and
// chunk lengths are right, and the fuzzer works on what is inside.
//
// The input's last byte m picks the form, so that a plain glTF JSON file (assets/robot_arm.gltf,
// ending in a newline) is a useful seed as it is: m % 16 == 0 sends the rest raw (the container
// checks themselves); otherwise the rest, up to its first NUL byte, is the JSON chunk and what
// follows the NUL is a BIN chunk; m % 16 == 1 or 2 puts the total or the JSON chunk's length off
// by a little (a truncated or overlong container).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "gltf_scene.h"

namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string container(std::string_view rest, uint8_t m) {
  const size_t nul = rest.find('\0');
  std::string json(rest.substr(0, nul));
  const bool with_bin = nul != std::string_view::npos;
  std::string bin(with_bin ? rest.substr(nul + 1) : std::string_view());
  while (json.size() % 4) json.push_back(' ');  // the spec pads chunks to 4 bytes
  while (bin.size() % 4) bin.push_back('\0');
  const uint32_t skew = static_cast<uint32_t>(int(m >> 4) % 5 - 2);  // wraps for -1, -2
  uint32_t total = static_cast<uint32_t>(12 + 8 + json.size() + (with_bin ? 8 + bin.size() : 0));
  uint32_t json_length = static_cast<uint32_t>(json.size());
  if (m % 16 == 1) total += skew;
  if (m % 16 == 2) json_length += skew;
  std::string glb = "glTF";
  put_u32(glb, 2);
  put_u32(glb, total);
  put_u32(glb, json_length);
  put_u32(glb, 0x4E4F534A);  // "JSON"
  glb += json;
  if (with_bin) {
    put_u32(glb, static_cast<uint32_t>(bin.size()));
    put_u32(glb, 0x004E4942);  // "BIN\0"
    glb += bin;
  }
  return glb;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t m = data[size - 1];
  const std::string_view rest(reinterpret_cast<const char*>(data), size - 1);
  const std::string glb = m % 16 == 0 ? std::string(rest) : container(rest, m);
  tprop::Result<tprop::Scene> scene =
      tprop::parse_gltf_scene(glb, "/nonexistent-tprop-fuzz/scene.glb");
  tprop::fuzz::evaluate_scene(scene);
  return 0;
}
