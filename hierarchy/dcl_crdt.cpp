#include "dcl_crdt.h"

#include <cassert>

#include "dcl_transform.h"

namespace tprop {

namespace {

bool valid_type(uint32_t t) { return t >= 1 && t <= kCrdtMessageTypeCount; }

// The size of everything before the data (header included): the whole message for the types
// without data.
size_t fixed_size(CrdtMessageType type) {
  switch (type) {
    case CrdtMessageType::PutComponent: return kCrdtHeaderSize + 16;
    case CrdtMessageType::DeleteComponent: return kCrdtHeaderSize + 12;
    case CrdtMessageType::DeleteEntity: return kCrdtHeaderSize + 4;
    case CrdtMessageType::AppendValue: return kCrdtHeaderSize + 16;
    case CrdtMessageType::PutComponentNetwork: return kCrdtHeaderSize + 20;
    case CrdtMessageType::DeleteComponentNetwork: return kCrdtHeaderSize + 16;
    case CrdtMessageType::DeleteEntityNetwork: return kCrdtHeaderSize + 8;
  }
  return 0;
}

std::string at_offset(uint64_t offset) {
  return "CRDT message at byte offset " + std::to_string(offset) + ": ";
}

// Reads the body of a message whose length has been validated and whose bytes are all present.
// Fills m from scratch, reusing the capacity of m.data.
void parse_body(CrdtMessageType type, const uint8_t* p, size_t length, CrdtMessage& m) {
  m.type = type;
  m.component = m.lamport = m.network_id = 0;
  m.data.clear();
  const uint8_t* q = p + kCrdtHeaderSize;
  auto u32 = [&q] {
    const uint32_t v = read_u32_le(q);
    q += 4;
    return v;
  };
  m.entity = u32();
  if (crdt_type_has_component(type)) {
    m.component = u32();
    m.lamport = u32();
  }
  if (crdt_type_is_network(type)) m.network_id = u32();
  if (crdt_type_has_data(type)) {
    q += 4;  // dataLength, already checked against length
    m.data.assign(q, p + length);
  }
}

}  // namespace

const char* crdt_message_type_name(CrdtMessageType type) {
  switch (type) {
    case CrdtMessageType::PutComponent: return "PUT_COMPONENT";
    case CrdtMessageType::DeleteComponent: return "DELETE_COMPONENT";
    case CrdtMessageType::DeleteEntity: return "DELETE_ENTITY";
    case CrdtMessageType::AppendValue: return "APPEND_VALUE";
    case CrdtMessageType::PutComponentNetwork: return "PUT_COMPONENT_NETWORK";
    case CrdtMessageType::DeleteComponentNetwork: return "DELETE_COMPONENT_NETWORK";
    case CrdtMessageType::DeleteEntityNetwork: return "DELETE_ENTITY_NETWORK";
  }
  return "UNKNOWN";
}

CrdtMessage CrdtMessage::put(EntityId e, uint32_t component, uint32_t lamport,
                             std::vector<uint8_t> data) {
  CrdtMessage m;
  m.type = CrdtMessageType::PutComponent;
  m.entity = e;
  m.component = component;
  m.lamport = lamport;
  m.data = std::move(data);
  return m;
}

CrdtMessage CrdtMessage::delete_component(EntityId e, uint32_t component, uint32_t lamport) {
  CrdtMessage m;
  m.type = CrdtMessageType::DeleteComponent;
  m.entity = e;
  m.component = component;
  m.lamport = lamport;
  return m;
}

CrdtMessage CrdtMessage::delete_entity(EntityId e) {
  CrdtMessage m;
  m.type = CrdtMessageType::DeleteEntity;
  m.entity = e;
  return m;
}

size_t crdt_encoded_size(const CrdtMessage& m) {
  assert(valid_type(uint32_t(m.type)));
  return fixed_size(m.type) + (crdt_type_has_data(m.type) ? m.data.size() : 0);
}

void append_crdt_message(const CrdtMessage& m, std::vector<uint8_t>& out) {
  // No reserve(size + length) here: it would defeat the vector's geometric growth and make a
  // stream of appends quadratic.
  const size_t length = crdt_encoded_size(m);
  append_u32_le(uint32_t(length), out);
  append_u32_le(uint32_t(m.type), out);
  append_u32_le(m.entity, out);
  if (crdt_type_has_component(m.type)) {
    append_u32_le(m.component, out);
    append_u32_le(m.lamport, out);
  }
  if (crdt_type_is_network(m.type)) append_u32_le(m.network_id, out);
  if (crdt_type_has_data(m.type)) {
    append_u32_le(uint32_t(m.data.size()), out);
    out.insert(out.end(), m.data.begin(), m.data.end());
  }
}

std::vector<uint8_t> encode_crdt_messages(std::span<const CrdtMessage> messages) {
  size_t total = 0;
  for (const CrdtMessage& m : messages) total += crdt_encoded_size(m);
  std::vector<uint8_t> out;
  out.reserve(total);
  for (const CrdtMessage& m : messages) append_crdt_message(m, out);
  return out;
}

Result<std::vector<CrdtMessage>> decode_crdt_messages(std::span<const uint8_t> bytes) {
  CrdtStreamReader reader;
  reader.append(bytes);
  std::vector<CrdtMessage> out;
  for (;;) {
    auto next = reader.next();
    if (!next) return next.error();
    if (!next.value()) break;
    out.push_back(std::move(*next.value()));
  }
  if (Status done = reader.finish(); !done) return done.error();
  return out;
}

void CrdtStreamReader::append(std::span<const uint8_t> bytes) {
  if (error_) return;
  // Drop consumed bytes once they are at least half the buffer: amortized O(1) per byte.
  if (read_ > 0 && read_ * 2 >= buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + std::ptrdiff_t(read_));
    read_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

Error CrdtStreamReader::fail(std::string message) {
  error_ = Error{at_offset(consumed_) + std::move(message)};
  buffer_.clear();
  read_ = 0;
  return *error_;
}

size_t CrdtStreamReader::malformed(std::string message) {
  fail(std::move(message));
  return kMalformed;
}

void CrdtStreamReader::stop(const char* why) noexcept {
  try {
    fail(why);
  } catch (...) {  // the message could not be made either
    error_ = Error{"out of memory"};  // short enough to need no allocation
    buffer_.clear();
    read_ = 0;
  }
}

Result<std::optional<CrdtMessage>> CrdtStreamReader::next() {
  CrdtMessage m;
  Result<bool> got = next(m);
  if (!got) return got.error();
  if (!*got) return std::optional<CrdtMessage>{};
  return std::optional<CrdtMessage>{std::move(m)};
}

Result<bool> CrdtStreamReader::next(CrdtMessage& out) {
  if (error_) return *error_;
  const size_t length = parse(buffer_.data() + read_, buffer_.size() - read_, out);
  if (length == kMalformed) return *error_;
  if (length == 0) return false;
  read_ += length;
  consumed_ += length;
  return true;
}

size_t CrdtStreamReader::missing_bytes() const {
  const size_t available = pending_bytes();
  if (available < kCrdtHeaderSize) return kCrdtHeaderSize - available;
  const uint32_t length = read_u32_le(buffer_.data() + read_);
  // A length next() refuses needs no more bytes: the next call of next() reports it.
  return length > available ? length - available : 1;
}

size_t CrdtStreamReader::parse(const uint8_t* p, size_t available, CrdtMessage& out) {
  if (available < kCrdtHeaderSize) return 0;
  const uint32_t length = read_u32_le(p);
  const uint32_t raw_type = read_u32_le(p + 4);
  // Everything the header alone can tell is checked before waiting for the body, so a corrupt
  // length is reported at once instead of waiting for bytes that will never come.
  if (length < kCrdtHeaderSize)
    return malformed("length " + std::to_string(length) + " is shorter than the 8-byte header");
  if (!valid_type(raw_type)) return malformed("unknown message type " + std::to_string(raw_type));
  const auto type = CrdtMessageType(raw_type);
  const size_t fixed = fixed_size(type);
  if (length < fixed)
    return malformed("length " + std::to_string(length) + " is shorter than the " +
                     std::to_string(fixed) + "-byte " + crdt_message_type_name(type) + " header");
  if (!crdt_type_has_data(type) && length != fixed)
    return malformed("length " + std::to_string(length) + " does not match the " +
                     std::to_string(fixed) + " bytes of " + crdt_message_type_name(type));
  if (available < fixed) return 0;
  if (crdt_type_has_data(type)) {
    const uint32_t data_length = read_u32_le(p + fixed - 4);
    if (data_length != length - fixed)
      return malformed("dataLength " + std::to_string(data_length) +
                       " disagrees with length " + std::to_string(length) + " (" +
                       std::to_string(length - fixed) + " bytes of data)");
  }
  if (available < length) return 0;
  parse_body(type, p, length, out);
  return length;
}

Status CrdtStreamReader::finish() const {
  if (error_) return *error_;
  const size_t left = pending_bytes();
  if (left == 0) return ok_status();
  if (left < kCrdtHeaderSize)
    return Error{at_offset(consumed_) + "the stream ends inside the 8-byte header (" +
                 std::to_string(left) + " bytes left)"};
  const uint32_t length = read_u32_le(buffer_.data() + read_);
  return Error{at_offset(consumed_) + "length " + std::to_string(length) +
               " runs past the end of the stream (" + std::to_string(left) + " bytes left)"};
}

}  // namespace tprop
