#include "dcl_transform.h"

#include <bit>

namespace tprop {

namespace {

void put_u32(uint32_t v, uint8_t*& p) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v >> 16);
  p[3] = uint8_t(v >> 24);
  p += 4;
}
void put_f32(float v, uint8_t*& p) { put_u32(std::bit_cast<uint32_t>(v), p); }

float get_f32(const uint8_t*& p) {
  const float v = std::bit_cast<float>(read_u32_le(p));
  p += 4;
  return v;
}

}  // namespace

std::array<uint8_t, kDclTransformSize> encode_dcl_transform(const DclTransform& t) {
  std::array<uint8_t, kDclTransformSize> out{};
  uint8_t* p = out.data();
  put_f32(t.position.x, p);
  put_f32(t.position.y, p);
  put_f32(t.position.z, p);
  // Wire order is x, y, z, w; glm::quat's constructor order (w first) plays no part here.
  put_f32(t.rotation.x, p);
  put_f32(t.rotation.y, p);
  put_f32(t.rotation.z, p);
  put_f32(t.rotation.w, p);
  put_f32(t.scale.x, p);
  put_f32(t.scale.y, p);
  put_f32(t.scale.z, p);
  put_u32(t.parent, p);
  return out;
}

void append_dcl_transform(const DclTransform& t, std::vector<uint8_t>& out) {
  const auto bytes = encode_dcl_transform(t);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

std::optional<DclTransform> decode_dcl_transform(std::span<const uint8_t> bytes) {
  if (bytes.size() != kDclTransformSize) return std::nullopt;
  const uint8_t* p = bytes.data();
  DclTransform t;
  t.position.x = get_f32(p);
  t.position.y = get_f32(p);
  t.position.z = get_f32(p);
  const float x = get_f32(p), y = get_f32(p), z = get_f32(p), w = get_f32(p);
  t.rotation = make_quat(x, y, z, w);
  t.scale.x = get_f32(p);
  t.scale.y = get_f32(p);
  t.scale.z = get_f32(p);
  t.parent = read_u32_le(p);
  return t;
}

float4x4 dcl_local_matrix(const DclTransform& t) {
  return translation_matrix(t.position) * rotation_matrix(t.rotation) * scale_matrix(t.scale);
}

}  // namespace tprop
