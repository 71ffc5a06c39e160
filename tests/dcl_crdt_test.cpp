// The CRDT message codec and the incremental stream reader, against wire bytes written out by
// hand from the ADR-117 layouts in NOTES.md.
#include <gtest/gtest.h>

#include "dcl_crdt.h"
#include "dcl_test_support.h"

namespace tprop {
namespace {

using dcl_test::hex;

// Entity number 5, version 2; component 9; lamport 7; network id 0x0a0b0c0d.
constexpr EntityId kEntity = 0x00020005u;

CrdtMessage with(CrdtMessageType type, std::vector<uint8_t> data = {}) {
  CrdtMessage m;
  m.type = type;
  m.entity = kEntity;
  if (crdt_type_has_component(type)) {
    m.component = 9;
    m.lamport = 7;
  }
  if (crdt_type_is_network(type)) m.network_id = 0x0a0b0c0du;
  if (crdt_type_has_data(type)) m.data = std::move(data);
  return m;
}

struct WireCase {
  CrdtMessage message;
  std::vector<uint8_t> bytes;
};

std::vector<WireCase> every_type() {
  return {
      {with(CrdtMessageType::PutComponent, {0xaa, 0xbb}),
       hex("1a 00 00 00  01 00 00 00  05 00 02 00  09 00 00 00  07 00 00 00  02 00 00 00  aa bb")},
      {with(CrdtMessageType::DeleteComponent),
       hex("14 00 00 00  02 00 00 00  05 00 02 00  09 00 00 00  07 00 00 00")},
      {with(CrdtMessageType::DeleteEntity), hex("0c 00 00 00  03 00 00 00  05 00 02 00")},
      {with(CrdtMessageType::AppendValue, {0x01}),
       hex("19 00 00 00  04 00 00 00  05 00 02 00  09 00 00 00  07 00 00 00  01 00 00 00  01")},
      {with(CrdtMessageType::PutComponentNetwork, {0xfe, 0xff, 0x00}),
       hex("1f 00 00 00  05 00 00 00  05 00 02 00  09 00 00 00  07 00 00 00  0d 0c 0b 0a "
           "03 00 00 00  fe ff 00")},
      {with(CrdtMessageType::DeleteComponentNetwork),
       hex("18 00 00 00  06 00 00 00  05 00 02 00  09 00 00 00  07 00 00 00  0d 0c 0b 0a")},
      {with(CrdtMessageType::DeleteEntityNetwork),
       hex("10 00 00 00  07 00 00 00  05 00 02 00  0d 0c 0b 0a")},
  };
}

TEST(CrdtCodec, EncodesEveryMessageTypeByteExact) {
  for (const WireCase& c : every_type()) {
    std::vector<uint8_t> out;
    append_crdt_message(c.message, out);
    EXPECT_EQ(out, c.bytes) << crdt_message_type_name(c.message.type);
    EXPECT_EQ(crdt_encoded_size(c.message), c.bytes.size());
  }
}

TEST(CrdtCodec, DecodesEveryMessageTypeFromHandWrittenBytes) {
  for (const WireCase& c : every_type()) {
    auto decoded = decode_crdt_messages(c.bytes);
    ASSERT_TRUE(decoded) << decoded.error().message;
    ASSERT_EQ(decoded->size(), 1u);
    EXPECT_EQ((*decoded)[0], c.message) << crdt_message_type_name(c.message.type);
  }
}

TEST(CrdtCodec, EntityIdSplitsIntoNumberLowAndVersionHigh) {
  EXPECT_EQ(dcl_entity_number(0x00020005u), 5);
  EXPECT_EQ(dcl_entity_version(0x00020005u), 2);
  EXPECT_EQ(dcl_entity_id(5, 2), 0x00020005u);
}

TEST(CrdtCodec, DecodesAConcatenatedStreamInOrder) {
  std::vector<CrdtMessage> all;
  std::vector<uint8_t> bytes;
  for (const WireCase& c : every_type()) {
    all.push_back(c.message);
    bytes.insert(bytes.end(), c.bytes.begin(), c.bytes.end());
  }
  EXPECT_EQ(encode_crdt_messages(all), bytes);
  auto decoded = decode_crdt_messages(bytes);
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, all);
}

TEST(CrdtStreamReader, HandsOutMessagesOnlyOnceComplete) {
  std::vector<uint8_t> bytes;
  for (const WireCase& c : every_type()) bytes.insert(bytes.end(), c.bytes.begin(), c.bytes.end());
  // One byte at a time: a message appears exactly when its last byte arrives.
  CrdtStreamReader reader;
  std::vector<size_t> completed_at;
  for (size_t i = 0; i < bytes.size(); ++i) {
    reader.append(std::span<const uint8_t>(&bytes[i], 1));
    auto next = reader.next();
    ASSERT_TRUE(next) << next.error().message;
    if (next.value()) completed_at.push_back(i + 1);
    EXPECT_FALSE(reader.next().value());  // never two from one byte
  }
  // Message ends: 26, +20, +12, +25, +31, +24, +16.
  EXPECT_EQ(completed_at, (std::vector<size_t>{26, 46, 58, 83, 114, 138, 154}));
  EXPECT_TRUE(reader.finish());
  EXPECT_EQ(reader.offset(), 154u);
}

TEST(CrdtStreamReader, IncompleteTrailingMessageWaitsThenFinishNamesItsOffset) {
  const std::vector<uint8_t> bytes =
      hex("0c 00 00 00  03 00 00 00  05 00 00 00 "   // DELETE_ENTITY at 0
          "14 00 00 00  02 00 00 00  05 00");       // DELETE_COMPONENT at 12, 10 of 20 bytes
  CrdtStreamReader reader;
  reader.append(bytes);
  ASSERT_TRUE(reader.next().value());
  auto waiting = reader.next();
  ASSERT_TRUE(waiting);
  EXPECT_FALSE(waiting.value());
  EXPECT_EQ(reader.pending_bytes(), 10u);
  const Status end = reader.finish();
  ASSERT_FALSE(end);
  EXPECT_NE(end.error().message.find("byte offset 12"), std::string::npos) << end.error().message;
  EXPECT_NE(end.error().message.find("length 20 runs past the end"), std::string::npos);
  // The rest arrives: the message completes.
  reader.append(hex("00 00  09 00 00 00  07 00 00 00"));
  auto m = reader.next();
  ASSERT_TRUE(m && m.value());
  EXPECT_EQ(m.value()->type, CrdtMessageType::DeleteComponent);
  EXPECT_TRUE(reader.finish());
}

TEST(CrdtStreamReader, StreamEndingInsideAHeaderIsAnError) {
  auto decoded = decode_crdt_messages(hex("0c 00 00 00  03 00 00 00  05 00 00 00  0c 00"));
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.error().message.find("byte offset 12"), std::string::npos);
  EXPECT_NE(decoded.error().message.find("inside the 8-byte header"), std::string::npos);
}

struct MalformedCase {
  const char* what;
  std::string bytes;  // a valid 12-byte DELETE_ENTITY, then the bad message at offset 12
  const char* expected;
};

std::vector<MalformedCase> malformed_cases() {
  const std::string good = "0c 00 00 00  03 00 00 00  05 00 00 00 ";
  return {
      {"length below the header", good + "07 00 00 00  03 00 00 00", "length 7 is shorter than the 8-byte header"},
      {"unknown type 0", good + "0c 00 00 00  00 00 00 00  05 00 00 00", "unknown message type 0"},
      {"unknown type 8", good + "0c 00 00 00  08 00 00 00  05 00 00 00", "unknown message type 8"},
      {"put shorter than its fixed part", good + "10 00 00 00  01 00 00 00  05 00 00 00  01 00 00 00",
       "length 16 is shorter than the 24-byte PUT_COMPONENT header"},
      {"delete entity too long", good + "10 00 00 00  03 00 00 00  05 00 00 00  00 00 00 00",
       "length 16 does not match the 12 bytes of DELETE_ENTITY"},
      {"dataLength disagrees", good + "1a 00 00 00  01 00 00 00  05 00 00 00  01 00 00 00  01 00 00 00  03 00 00 00  aa bb",
       "dataLength 3 disagrees with length 26"},
  };
}

TEST(CrdtStreamReader, MalformedMessagesAreErrorsNamingTheirOffset) {
  for (const MalformedCase& c : malformed_cases()) {
    CrdtStreamReader reader;
    reader.append(hex(c.bytes));
    auto first = reader.next();
    ASSERT_TRUE(first && first.value()) << c.what;  // the good message comes out first
    auto bad = reader.next();
    ASSERT_FALSE(bad) << c.what;
    EXPECT_NE(bad.error().message.find("byte offset 12"), std::string::npos)
        << c.what << ": " << bad.error().message;
    EXPECT_NE(bad.error().message.find(c.expected), std::string::npos)
        << c.what << ": " << bad.error().message;
    // Sticky: the reader stays failed, finish reports the same error.
    reader.append(hex("0c 00 00 00  03 00 00 00  05 00 00 00"));
    EXPECT_FALSE(reader.next());
    EXPECT_FALSE(reader.finish());
  }
}

TEST(CrdtStreamReader, HeaderErrorsDoNotWaitForTheBody) {
  // A corrupt length of 4 GiB with a type that does not allow it fails at once.
  CrdtStreamReader reader;
  reader.append(hex("ff ff ff ff  02 00 00 00"));
  EXPECT_FALSE(reader.next());
}

// Puts of varied lengths (0 to 18 bytes) and a delete every fifth entity: a stream to cut.
std::vector<CrdtMessage> forty_puts_and_some_deletes() {
  std::vector<CrdtMessage> all;
  for (int i = 0; i < 40; ++i) {
    std::vector<uint8_t> data(size_t(i % 7) * 3, uint8_t(i));
    all.push_back(CrdtMessage::put(EntityId(i), uint32_t(i % 3), uint32_t(i), data));
    if (i % 5 == 0) all.push_back(CrdtMessage::delete_entity(EntityId(i)));
  }
  return all;
}

TEST(CrdtStreamReader, ChunkSizeDoesNotChangeTheMessages) {
  const std::vector<CrdtMessage> all = forty_puts_and_some_deletes();
  const std::vector<uint8_t> bytes = encode_crdt_messages(all);
  for (size_t chunk : {size_t(1), size_t(3), size_t(8), size_t(13), size_t(64), bytes.size()}) {
    CrdtStreamReader reader;
    std::vector<CrdtMessage> got;
    for (size_t at = 0; at < bytes.size(); at += chunk) {
      reader.append(std::span<const uint8_t>(bytes).subspan(at, std::min(chunk, bytes.size() - at)));
      for (;;) {
        auto next = reader.next();
        ASSERT_TRUE(next) << next.error().message;
        if (!next.value()) break;
        got.push_back(std::move(*next.value()));
      }
    }
    EXPECT_TRUE(reader.finish());
    EXPECT_EQ(got, all) << "chunk " << chunk;
  }
}

// feed() reads the messages that lie whole in a chunk where they are and copies only those cut
// by a chunk's end: the messages, their order and the errors must be next()'s, however the
// stream is cut.
TEST(CrdtStreamReader, FeedGivesNextsMessagesAndErrorsWhateverTheChunks) {
  const std::vector<CrdtMessage> all = forty_puts_and_some_deletes();
  const std::vector<uint8_t> bytes = encode_crdt_messages(all);
  const auto feed_in_chunks = [](std::span<const uint8_t> stream, size_t chunk,
                                 std::vector<CrdtMessage>& got) {
    CrdtStreamReader reader;
    CrdtMessage scratch;
    for (size_t at = 0; at < stream.size(); at += chunk) {
      Status s = reader.feed(stream.subspan(at, std::min(chunk, stream.size() - at)), scratch,
                             [&](const CrdtMessage& m) { got.push_back(m); });
      if (!s) return s;
    }
    return reader.finish();
  };
  for (size_t chunk : {size_t(1), size_t(3), size_t(8), size_t(13), size_t(64), bytes.size()}) {
    std::vector<CrdtMessage> got;
    EXPECT_TRUE(feed_in_chunks(bytes, chunk, got)) << "chunk " << chunk;
    EXPECT_EQ(got, all) << "chunk " << chunk;
  }
  for (const MalformedCase& c : malformed_cases()) {
    const std::vector<uint8_t> stream = hex(c.bytes);
    for (size_t chunk : {size_t(1), size_t(5), size_t(12), stream.size()}) {
      std::vector<CrdtMessage> got;
      const Status s = feed_in_chunks(stream, chunk, got);
      ASSERT_FALSE(s) << c.what << ", chunk " << chunk;
      EXPECT_EQ(got.size(), 1u) << c.what << ", chunk " << chunk;  // the good message first
      EXPECT_NE(s.error().message.find("byte offset 12"), std::string::npos)
          << c.what << ", chunk " << chunk << ": " << s.error().message;
      EXPECT_NE(s.error().message.find(c.expected), std::string::npos)
          << c.what << ", chunk " << chunk << ": " << s.error().message;
    }
  }
  // A stream that ends inside a message: finish() names where it began.
  std::vector<CrdtMessage> got;
  const Status cut = feed_in_chunks(std::span<const uint8_t>(bytes).first(bytes.size() - 1), 13, got);
  ASSERT_FALSE(cut);
  EXPECT_EQ(got.size(), all.size() - 1);
  EXPECT_NE(cut.error().message.find("runs past the end"), std::string::npos) << cut.error().message;
}

// Reading every type into one reused message leaves nothing of the previous message behind
// (a DELETE_ENTITY after a PUT has no component, lamport or data).
TEST(CrdtStreamReader, ReadingIntoOneMessageAgainGivesEachMessageAsIs) {
  std::vector<uint8_t> bytes;
  std::vector<CrdtMessage> expected;
  for (int round = 0; round < 2; ++round) {
    for (const WireCase& c : every_type()) {
      bytes.insert(bytes.end(), c.bytes.begin(), c.bytes.end());
      expected.push_back(c.message);
    }
  }
  CrdtStreamReader reader;
  reader.append(bytes);
  CrdtMessage m;
  for (const CrdtMessage& want : expected) {
    Result<bool> got = reader.next(m);
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_TRUE(got.value());
    EXPECT_EQ(m, want) << crdt_message_type_name(want.type);
  }
  Result<bool> end = reader.next(m);
  ASSERT_TRUE(end);
  EXPECT_FALSE(end.value());
}

}  // namespace
}  // namespace tprop
