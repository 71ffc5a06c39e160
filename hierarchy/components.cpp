#include "components.h"

#include <array>

namespace tprop {

namespace {
constexpr std::array<std::string_view, kComponentCount> kNames = {
    "Translation",          "Rotation",
    "Scale",                "NonUniformScale",
    "RotationEulerXYZ",     "RotationEulerXZY",
    "RotationEulerYXZ",     "RotationEulerYZX",
    "RotationEulerZXY",     "RotationEulerZYX",
    "PostRotation",         "PostRotationEulerXYZ",
    "PostRotationEulerXZY", "PostRotationEulerYXZ",
    "PostRotationEulerYZX", "PostRotationEulerZXY",
    "PostRotationEulerZYX", "RotationPivot",
    "RotationPivotTranslation", "ScalePivot",
    "ScalePivotTranslation", "CompositeRotation",
    "CompositeScale",       "ParentScaleInverse",
    "LocalToParent",        "LocalToWorld",
    "Parent",               "Static",
    "WriteGroupOverride",
};
}  // namespace

std::string_view component_name(Component c) { return kNames[static_cast<size_t>(c)]; }

std::optional<Component> component_from_name(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Component>(i);
  return std::nullopt;
}

}  // namespace tprop
