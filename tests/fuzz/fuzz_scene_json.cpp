// libFuzzer harness: the JSON scene loader (hierarchy/scene_json.h) on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "scene_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tprop::Result<tprop::Scene> scene = tprop::parse_scene_json(text, "fuzz.json");
  tprop::fuzz::evaluate_scene(scene);
  return 0;
}
