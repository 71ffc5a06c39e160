// Robustness of the stream path: a valid stream cut at every byte offset, and with single bytes
// flipped at every offset, never crashes or hangs, keeps every message before the damage, and
// reports errors that name a byte offset where a message starts (as the reader saw it).
#include <gtest/gtest.h>

#include <string>

#include "dcl_scene.h"
#include "dcl_test_support.h"
#include "reference.h"

namespace tprop {
namespace {

using dcl_test::at;
using dcl_test::put_transform;

struct Stream {
  std::vector<uint8_t> bytes;
  std::vector<size_t> starts;  // offset of each message, then the total size
};

// Every message type, Transforms with parents, a cycle, deletes.
Stream sample_stream() {
  std::vector<CrdtMessage> messages;
  for (EntityId e = 1; e <= 8; ++e)
    messages.push_back(put_transform(e, 1, at({float(e), 0, 0}, e > 1 ? e - 1 : 0)));
  messages.push_back(put_transform(1, 2, at({1, 0, 0}, 8)));  // closes a cycle
  messages.push_back(CrdtMessage::put(3, 1099, 1, {1, 2, 3, 4, 5}));
  messages.push_back(dcl_test::delete_transform(4, 2));
  CrdtMessage append = CrdtMessage::put(5, 1040, 1, {9, 9});
  append.type = CrdtMessageType::AppendValue;
  messages.push_back(append);
  CrdtMessage net_put = put_transform(9, 1, at({0, 9, 0}, 2));
  net_put.type = CrdtMessageType::PutComponentNetwork;
  net_put.network_id = 42;
  messages.push_back(net_put);
  CrdtMessage net_del = CrdtMessage::delete_component(9, 1099, 1);
  net_del.type = CrdtMessageType::DeleteComponentNetwork;
  net_del.network_id = 42;
  messages.push_back(net_del);
  messages.push_back(CrdtMessage::delete_entity(6));
  CrdtMessage net_kill = CrdtMessage::delete_entity(7);
  net_kill.type = CrdtMessageType::DeleteEntityNetwork;
  net_kill.network_id = 42;
  messages.push_back(net_kill);
  messages.push_back(put_transform(10, 3, at({0, 0, 10}, 1)));
  Stream s;
  for (const CrdtMessage& m : messages) {
    s.starts.push_back(s.bytes.size());
    append_crdt_message(m, s.bytes);
  }
  s.starts.push_back(s.bytes.size());
  return s;
}

// The offset an error names; npos when it names none.
size_t named_offset(const std::string& message) {
  const std::string key = "byte offset ";
  const size_t at_key = message.find(key);
  if (at_key == std::string::npos) return std::string::npos;
  return std::stoul(message.substr(at_key + key.size()));
}

// Index of the message holding byte i.
size_t message_holding(const Stream& s, size_t i) {
  size_t m = 0;
  while (s.starts[m + 1] <= i) ++m;
  return m;
}

TEST(DclRobustness, StreamCutAtEveryOffsetKeepsTheCompleteMessagesAndNamesTheCutOne) {
  const Stream s = sample_stream();
  for (size_t cut = 0; cut <= s.bytes.size(); ++cut) {
    DclScene dcl;
    ASSERT_TRUE(dcl.feed(std::span<const uint8_t>(s.bytes).first(cut))) << "cut " << cut;
    size_t complete = 0;  // messages wholly inside the prefix
    while (complete + 1 < s.starts.size() && s.starts[complete + 1] <= cut) ++complete;
    EXPECT_EQ(dcl.state().counts().total(), complete) << "cut " << cut;
    const Status end = dcl.finish();
    const bool at_boundary = s.starts[complete] == cut;
    EXPECT_EQ(end.ok(), at_boundary) << "cut " << cut;
    if (!end.ok()) {
      EXPECT_EQ(named_offset(end.error().message), s.starts[complete]) << end.error().message;
    }
    (void)world_matrices_by_id(dcl.store());  // evaluates whatever was applied

    auto loaded = load_crdt_scene_from_bytes(std::span<const uint8_t>(s.bytes).first(cut), "cut");
    EXPECT_EQ(loaded.ok(), at_boundary) << "cut " << cut;
  }
}

TEST(DclRobustness, SingleByteFlipsAtEveryOffsetNeverCrashAndErrorsNameAnOffset) {
  const Stream s = sample_stream();
  size_t errors = 0;
  for (size_t i = 0; i < s.bytes.size(); ++i) {
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> bytes = s.bytes;
      bytes[i] ^= mask;
      const size_t damaged = message_holding(s, i);
      DclScene dcl;
      Status st = dcl.feed(bytes);
      if (st) st = dcl.finish();
      // Everything before the damaged message was applied, whatever happened after.
      EXPECT_GE(dcl.state().counts().total(), damaged) << "byte " << i;
      if (!st) {
        ++errors;
        const size_t offset = named_offset(st.error().message);
        ASSERT_NE(offset, std::string::npos) << st.error().message;
        EXPECT_GE(offset, s.starts[damaged]) << "byte " << i << ": " << st.error().message;
        EXPECT_LT(offset, bytes.size()) << "byte " << i << ": " << st.error().message;
      }
      // NaNs, huge parents, odd scales: the reference evaluates them without harm.
      (void)world_matrices_by_id(dcl.store());
    }
  }
  EXPECT_GT(errors, 0u);  // flips in lengths and types are caught
}

TEST(DclRobustness, FlipsInLengthOrTypeAreCaughtAtTheDamagedMessage) {
  const Stream s = sample_stream();
  // The type field's low byte: every flip gives an unknown type or a length mismatch.
  for (size_t m = 0; m + 1 < s.starts.size(); ++m) {
    std::vector<uint8_t> bytes = s.bytes;
    bytes[s.starts[m] + 4] ^= 0x80;  // type 1..7 -> 129..135: unknown
    DclScene dcl;
    const Status st = dcl.feed(bytes);
    ASSERT_FALSE(st) << "message " << m;
    EXPECT_EQ(named_offset(st.error().message), s.starts[m]) << st.error().message;
    EXPECT_EQ(dcl.state().counts().total(), m);
  }
}

}  // namespace
}  // namespace tprop
