// The Decentraland Transform component (component id 1) on the wire: a 44-byte little-endian
// struct, position f32x3, rotation f32x4 (x, y, z, w), scale f32x3, parent u32
// (decentraland-transform.txt, NOTES.md). Encoding and decoding go byte by byte, so they give the
// same bytes on any host whatever its endianness.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "components.h"
#include "math.h"

namespace tprop {

inline constexpr uint32_t kDclTransformComponentId = 1;
inline constexpr size_t kDclTransformSize = 44;
// Entity 0 is the scene root: a parent of 0 means "at the root".
inline constexpr EntityId kDclRootEntity = 0;

// Defaults are Transform.Identity.
struct DclTransform {
  float3 position{0.0f};
  quat rotation{1.0f, 0.0f, 0.0f, 0.0f};  // glm order: w first; identity
  float3 scale{1.0f};
  EntityId parent = kDclRootEntity;

  // Field by field, bit-exact for finite values (glm's == on floats).
  friend bool operator==(const DclTransform&, const DclTransform&) = default;
};

std::array<uint8_t, kDclTransformSize> encode_dcl_transform(const DclTransform& t);
void append_dcl_transform(const DclTransform& t, std::vector<uint8_t>& out);
// Empty when bytes is not exactly 44 bytes long: a Transform of any other size is malformed.
std::optional<DclTransform> decode_dcl_transform(std::span<const uint8_t> bytes);

// The local matrix T(position) * R(rotation) * S(scale).
float4x4 dcl_local_matrix(const DclTransform& t);

// Little-endian helpers shared by the CRDT codec.
inline uint32_t read_u32_le(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline void append_u32_le(uint32_t v, std::vector<uint8_t>& out) {
  out.push_back(uint8_t(v));
  out.push_back(uint8_t(v >> 8));
  out.push_back(uint8_t(v >> 16));
  out.push_back(uint8_t(v >> 24));
}

}  // namespace tprop
