// libFuzzer harness: the glTF loader (hierarchy/gltf_scene.h) on arbitrary bytes, as a .gltf
// (a .glb's magic in the input still selects the binary path, as it does for a real file). The
// path's folder does not exist, so relative buffer URIs name no file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "gltf_scene.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  tprop::Result<tprop::Scene> scene =
      tprop::parse_gltf_scene(bytes, "/nonexistent-tprop-fuzz/scene.gltf");
  tprop::fuzz::evaluate_scene(scene);
  return 0;
}
