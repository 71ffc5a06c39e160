// The 44-byte Decentraland Transform: bytes written out by hand from the IEEE-754 encodings
// (1.0f = 0x3f800000, -2.0f = 0xc0000000, 0.5f = 0x3f000000, 2.0f = 0x40000000,
// sqrt(1/2) rounded = 0x3f3504f3), little-endian.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "dcl_test_support.h"
#include "dcl_transform.h"

namespace tprop {
namespace {

using dcl_test::hex;

const std::vector<uint8_t> kSampleBytes = hex(
    "00 00 80 3f  00 00 00 c0  00 00 00 3f "              // position (1, -2, 0.5)
    "00 00 00 00  f3 04 35 3f  00 00 00 00  f3 04 35 3f "  // rotation (0, s, 0, s)
    "00 00 00 40  00 00 80 3f  00 00 00 3f "              // scale (2, 1, 0.5)
    "03 02 01 00");                                       // parent 0x00010203

DclTransform sample() {
  const float s = std::bit_cast<float>(0x3f3504f3u);
  DclTransform t;
  t.position = float3(1.0f, -2.0f, 0.5f);
  t.rotation = make_quat(0.0f, s, 0.0f, s);
  t.scale = float3(2.0f, 1.0f, 0.5f);
  t.parent = 0x00010203u;
  return t;
}

TEST(DclTransform, EncodesFieldsLittleEndianInWireOrder) {
  const auto bytes = encode_dcl_transform(sample());
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.end()), kSampleBytes);
}

TEST(DclTransform, DecodesHandWrittenBytes) {
  const std::optional<DclTransform> t = decode_dcl_transform(kSampleBytes);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->position, float3(1.0f, -2.0f, 0.5f));
  EXPECT_EQ(t->rotation.x, 0.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(t->rotation.y), 0x3f3504f3u);
  EXPECT_EQ(t->rotation.z, 0.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(t->rotation.w), 0x3f3504f3u);
  EXPECT_EQ(t->scale, float3(2.0f, 1.0f, 0.5f));
  EXPECT_EQ(t->parent, 0x00010203u);
}

TEST(DclTransform, DefaultIsTransformIdentity) {
  const auto bytes = encode_dcl_transform(DclTransform{});
  // position 0, rotation (0, 0, 0, 1), scale (1, 1, 1), parent 0 (the root).
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.end()),
            hex("00 00 00 00  00 00 00 00  00 00 00 00 "
                "00 00 00 00  00 00 00 00  00 00 00 00  00 00 80 3f "
                "00 00 80 3f  00 00 80 3f  00 00 80 3f "
                "00 00 00 00"));
  EXPECT_EQ(dcl_local_matrix(DclTransform{}), float4x4(1.0f));
}

TEST(DclTransform, RoundTripKeepsEveryBitIncludingNegativeZeroAndNaN) {
  DclTransform t = sample();
  t.position.x = -0.0f;
  t.scale.z = std::bit_cast<float>(0x7fc00001u);  // a NaN with a payload
  const auto bytes = encode_dcl_transform(t);
  const std::optional<DclTransform> back = decode_dcl_transform(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(encode_dcl_transform(*back), bytes);
  EXPECT_EQ(bytes[3], 0x80);  // -0.0f = 0x80000000
}

TEST(DclTransform, RejectsDataThatIsNotExactly44Bytes) {
  std::vector<uint8_t> short_data(kSampleBytes.begin(), kSampleBytes.end() - 1);
  std::vector<uint8_t> long_data = kSampleBytes;
  long_data.push_back(0);
  EXPECT_FALSE(decode_dcl_transform(short_data));
  EXPECT_FALSE(decode_dcl_transform(long_data));
  EXPECT_FALSE(decode_dcl_transform({}));
}

TEST(DclTransform, LocalMatrixIsTranslationRotationScale) {
  // Quarter turn about +y maps x to -z; scale (2, 1, 1) first, then the turn, then (1, 2, 3).
  const float s = std::sqrt(0.5f);
  const DclTransform t =
      dcl_test::transform(float3(1, 2, 3), make_quat(0, s, 0, s), float3(2, 1, 1));
  const float4x4 m = dcl_local_matrix(t);
  const float4 x = m * float4(1, 0, 0, 1);
  EXPECT_NEAR(x.x, 1.0f, 1e-6f);
  EXPECT_NEAR(x.y, 2.0f, 1e-6f);
  EXPECT_NEAR(x.z, 1.0f, 1e-6f);  // 3 - 2
  const float4 z = m * float4(0, 0, 1, 1);
  EXPECT_NEAR(z.x, 2.0f, 1e-6f);  // +z turns to +x
  EXPECT_NEAR(z.y, 2.0f, 1e-6f);
  EXPECT_NEAR(z.z, 3.0f, 1e-6f);
}

}  // namespace
}  // namespace tprop
