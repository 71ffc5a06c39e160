// --output-layout of the tools (tprop run/render, tprop_bench): PropagatorOptions::output_layout
// by name, 4x4 (OutputLayout::Float4x4, the default) or 3x4 (OutputLayout::Affine3x4). One
// parser, so the tools accept the same spellings and say the same thing about a bad one.
#pragma once

#include <optional>
#include <string>

#include "propagator.h"
#include "result.h"

namespace tprop {

inline Result<OutputLayout> parse_output_layout(const std::optional<std::string>& value) {
  if (value && *value == "4x4") return OutputLayout::Float4x4;
  if (value && *value == "3x4") return OutputLayout::Affine3x4;
  return Error{"--output-layout needs 4x4 (float4x4, 64 bytes an entity) or 3x4 (affine rows, "
               "48 bytes an entity), got '" + value.value_or("") + "'"};
}

inline const char* output_layout_name(OutputLayout layout) {
  return layout == OutputLayout::Affine3x4 ? "3x4" : "4x4";
}

}  // namespace tprop
