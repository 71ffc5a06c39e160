// Decentraland CRDT messages (ADR-117, NOTES.md) and an incremental reader for a stream of them.
//
// Every message starts with `u32 length` (the whole message, header included) and `u32 type`;
// all fields are little-endian. The seven types and their bodies:
//   1 PUT_COMPONENT            entity, component, lamport, dataLength, data
//   2 DELETE_COMPONENT         entity, component, lamport
//   3 DELETE_ENTITY            entity
//   4 APPEND_VALUE             as PUT_COMPONENT
//   5 PUT_COMPONENT_NETWORK    entity, component, lamport, networkId, dataLength, data
//   6 DELETE_COMPONENT_NETWORK entity, component, lamport, networkId
//   7 DELETE_ENTITY_NETWORK    entity, networkId
// The reader accepts bytes in chunks of any size: a message is handed out once all of it has
// arrived, and an incomplete one at the end waits for more bytes. A malformed message (a length
// shorter than its header or not matching its type, a dataLength that disagrees with the length,
// an unknown type) stops the reader with an error naming the message's byte offset; every
// message before it has already been handed out.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "components.h"
#include "dcl_transform.h"
#include "prefetch.h"
#include "result.h"

namespace tprop {

enum class CrdtMessageType : uint32_t {
  PutComponent = 1,
  DeleteComponent = 2,
  DeleteEntity = 3,
  AppendValue = 4,
  PutComponentNetwork = 5,
  DeleteComponentNetwork = 6,
  DeleteEntityNetwork = 7,
};
inline constexpr uint32_t kCrdtMessageTypeCount = 7;
inline constexpr size_t kCrdtHeaderSize = 8;  // length + type

// "PUT_COMPONENT", ... for reports; "UNKNOWN" outside 1..7.
const char* crdt_message_type_name(CrdtMessageType type);

// The Decentraland entity id: number in the low 16 bits, version in the high 16 bits.
inline constexpr uint16_t dcl_entity_number(EntityId e) { return uint16_t(e & 0xffffu); }
inline constexpr uint16_t dcl_entity_version(EntityId e) { return uint16_t(e >> 16); }
inline constexpr EntityId dcl_entity_id(uint16_t number, uint16_t version) {
  return EntityId(number) | EntityId(version) << 16;
}

// One decoded message. Fields a type does not carry stay zero (data stays empty).
struct CrdtMessage {
  CrdtMessageType type = CrdtMessageType::PutComponent;
  EntityId entity = 0;
  uint32_t component = 0;   // types 1, 2, 4, 5, 6
  uint32_t lamport = 0;     // types 1, 2, 4, 5, 6
  uint32_t network_id = 0;  // types 5, 6, 7
  std::vector<uint8_t> data;  // types 1, 4, 5

  friend bool operator==(const CrdtMessage&, const CrdtMessage&) = default;

  static CrdtMessage put(EntityId e, uint32_t component, uint32_t lamport,
                         std::vector<uint8_t> data);
  static CrdtMessage delete_component(EntityId e, uint32_t component, uint32_t lamport);
  static CrdtMessage delete_entity(EntityId e);
};

// Whether the type carries data (PUT, APPEND, PUT_NETWORK), a component (all but the
// DELETE_ENTITY forms), a network id (5, 6, 7). Inline: they are asked several times a message.
inline bool crdt_type_has_data(CrdtMessageType type) {
  return type == CrdtMessageType::PutComponent || type == CrdtMessageType::AppendValue ||
         type == CrdtMessageType::PutComponentNetwork;
}
inline bool crdt_type_has_component(CrdtMessageType type) {
  return type != CrdtMessageType::DeleteEntity && type != CrdtMessageType::DeleteEntityNetwork;
}
inline bool crdt_type_is_network(CrdtMessageType type) {
  return type == CrdtMessageType::PutComponentNetwork ||
         type == CrdtMessageType::DeleteComponentNetwork ||
         type == CrdtMessageType::DeleteEntityNetwork;
}
// The message's size on the wire, header included.
size_t crdt_encoded_size(const CrdtMessage& m);
// Appends the wire form of m. m.type must be one of the seven; data is ignored by types
// without data. These two and decode_crdt_messages() throw std::bad_alloc out of host memory
// (result.h); CrdtStreamReader's feeders report it as an error.
void append_crdt_message(const CrdtMessage& m, std::vector<uint8_t>& out);
std::vector<uint8_t> encode_crdt_messages(std::span<const CrdtMessage> messages);

// Decodes a complete buffer: every message, or the first error (a trailing incomplete message
// included), naming its offset.
Result<std::vector<CrdtMessage>> decode_crdt_messages(std::span<const uint8_t> bytes);

class CrdtStreamReader {
 public:
  // Adds bytes that arrived; the reader keeps them until the messages they complete are read.
  void append(std::span<const uint8_t> bytes);
  // The next complete message; empty when more bytes are needed. An error is sticky: every
  // later call returns it again and appended bytes are dropped.
  Result<std::optional<CrdtMessage>> next();
  // The same into `out` (true: a message was read), reusing its data's capacity: no allocation
  // per message when one message object is read into again and again.
  Result<bool> next(CrdtMessage& out);
  // append(bytes), then every message read is handed to on_message(const CrdtMessage&), read
  // into `scratch`; the same messages and errors as append() and next() in a loop, but the
  // messages that lie whole in `bytes` are read where they are: only a message cut by the end
  // of a chunk is copied into the reader. A malformed message returns its error (sticky, as
  // next()'s) after the messages before it were handed out.
  template <class OnMessage>
  Status feed(std::span<const uint8_t> bytes, CrdtMessage& scratch, OnMessage&& on_message) {
    return feed_into(bytes, [&]() -> CrdtMessage& { return scratch; }, on_message);
  }
  // The same, each message read into the CrdtMessage that scratch_for() returns for it: for a
  // caller that keeps the messages it is handed in a ring of its own, where each is then read
  // without a copy.
  template <class ScratchFor, class OnMessage>
  Status feed_into(std::span<const uint8_t> bytes, ScratchFor&& scratch_for,
                   OnMessage&& on_message);
  // The stream has ended: an error when an incomplete message is left over (its length runs
  // past the end of the stream), or when the reader already failed.
  Status finish() const;
  // Stops the stream at the next message to read, with an error as sticky as a malformed
  // message's, naming `why`: for a caller that could not take a message the reader handed out
  // (out of memory), so that nothing after it is read as if the stream were whole.
  void stop(const char* why) noexcept;

  // The stream offset of the next message to read (all earlier bytes have been consumed).
  uint64_t offset() const { return consumed_; }
  // Bytes received but not yet handed out as messages.
  size_t pending_bytes() const { return buffer_.size() - read_; }
  bool failed() const { return error_.has_value(); }

 private:
  Error fail(std::string message);
  // fail(message), for parse(): kMalformed.
  size_t malformed(std::string message);
  // Reads the message at p if all of it is among the `available` bytes: its length, 0 when
  // more bytes are needed, or kMalformed with the error in error_ (offsets counted from
  // consumed_). A plain size, not a Result: a world reads some 12,000 messages a frame here.
  static constexpr size_t kMalformed = SIZE_MAX;
  size_t parse(const uint8_t* p, size_t available, CrdtMessage& out);
  // What parse() does with most messages of a stream, inline, for feed_into()'s messages read
  // in place: a PUT_COMPONENT of a Transform's 44 bytes, whole among the available bytes, whose
  // checks come down to its dataLength and whose data is copied by a copy of known size (a world
  // frame reads some 12,000 of them). False, having read nothing, for any other message.
  static constexpr size_t kPutFixed = kCrdtHeaderSize + 16;
  static constexpr uint32_t kTransformPutLength = kPutFixed + kDclTransformSize;
  static bool read_transform_put(const uint8_t* p, size_t available, CrdtMessage& out) {
    if (available < kTransformPutLength || read_u32_le(p) != kTransformPutLength ||
        read_u32_le(p + 4) != uint32_t(CrdtMessageType::PutComponent) ||
        read_u32_le(p + kPutFixed - 4) != kDclTransformSize)
      return false;
    out.type = CrdtMessageType::PutComponent;
    out.entity = read_u32_le(p + kCrdtHeaderSize);
    out.component = read_u32_le(p + kCrdtHeaderSize + 4);
    out.lamport = read_u32_le(p + kCrdtHeaderSize + 8);
    out.network_id = 0;
    if (out.data.size() != kDclTransformSize) out.data.resize(kDclTransformSize);
    std::memcpy(out.data.data(), p + kPutFixed, kDclTransformSize);
    return true;
  }
  // How many more bytes the incomplete message in the buffer needs before next() can tell
  // more: the rest of its header, else the rest of its length.
  size_t missing_bytes() const;

  static constexpr size_t kCacheLine = 64;
  static constexpr size_t kReadAhead = 1024;  // about 15 Transform messages

  std::vector<uint8_t> buffer_;
  size_t read_ = 0;        // index in buffer_ of the next message
  uint64_t consumed_ = 0;  // stream offset of buffer_[read_]
  std::optional<Error> error_;
};

template <class ScratchFor, class OnMessage>
Status CrdtStreamReader::feed_into(std::span<const uint8_t> bytes, ScratchFor&& scratch_for,
                                   OnMessage&& on_message) {
  if (error_) return *error_;
  // A message begun by earlier bytes is completed through the buffer, a few bytes at a time...
  while (!bytes.empty() && pending_bytes() > 0) {
    const size_t take = std::min(bytes.size(), missing_bytes());
    append(bytes.first(take));
    bytes = bytes.subspan(take);
    CrdtMessage& scratch = scratch_for();
    Result<bool> got = next(scratch);
    if (!got) return got.error();
    if (*got) on_message(static_cast<const CrdtMessage&>(scratch));
  }
  // ...and the rest is read in place. The bytes are fresh (a world feeds each scene a few
  // hundred bytes a frame, from a different place each time, too few for the hardware to see a
  // sequence): requesting the lines ahead of the reading overlaps their cache misses.
  const uint8_t* const end = bytes.data() + bytes.size();
  const uint8_t* ahead = reinterpret_cast<const uint8_t*>(
      reinterpret_cast<uintptr_t>(bytes.data()) & ~uintptr_t(kCacheLine - 1));
  const auto prefetch_until = [&](const uint8_t* until) {
    for (until = std::min(until, end); ahead < until; ahead += kCacheLine)
      prefetch_line(ahead);
  };
  while (!bytes.empty()) {
    prefetch_until(bytes.data() + kReadAhead);
    CrdtMessage& scratch = scratch_for();
    const size_t length = read_transform_put(bytes.data(), bytes.size(), scratch)
                              ? kTransformPutLength
                              : parse(bytes.data(), bytes.size(), scratch);
    if (length == kMalformed) return *error_;
    if (length == 0) break;
    consumed_ += length;
    bytes = bytes.subspan(length);
    on_message(static_cast<const CrdtMessage&>(scratch));
  }
  append(bytes);
  return ok_status();
}

}  // namespace tprop
