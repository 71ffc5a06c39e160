// The bytes of a CRDT value, with room for a Decentraland Transform (44 bytes) in place.
//
// A world holds a Transform per entity and overwrites it on every move: as a std::vector each
// value was a heap block of its own (an allocation when an entity appears, and a cache miss on
// another line at every message). Values up to kInline bytes live inside the object; longer ones
// (other components, malformed Transforms) go to the heap, whose block is reused while it is
// large enough. The object is 45 bytes, byte-aligned: the size (or a mark that the bytes hold a
// pointer to a heap block, which keeps its own size) in one byte after the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

namespace tprop {

class SmallBytes {
 public:
  static constexpr size_t kInline = 44;

  SmallBytes() = default;
  explicit SmallBytes(std::span<const uint8_t> bytes) { assign(bytes); }
  SmallBytes(const SmallBytes& other) { assign(other.span()); }
  SmallBytes(SmallBytes&& other) noexcept { take(other); }
  SmallBytes& operator=(const SmallBytes& other) {
    if (this != &other) assign(other.span());
    return *this;
  }
  SmallBytes& operator=(SmallBytes&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  ~SmallBytes() { release(); }

  void assign(std::span<const uint8_t> bytes) {
    const size_t n = bytes.size();
    if (n > kInline) {
      if (!on_heap() || n > block()->capacity) {
        // A fresh block before the old one goes: bytes may point into the old one.
        Block* fresh = static_cast<Block*>(::operator new(sizeof(Block) + n));
        fresh->size = fresh->capacity = uint32_t(n);
        std::memcpy(fresh + 1, bytes.data(), n);
        release();
        set_block(fresh);
        return;
      }
      std::memmove(block() + 1, bytes.data(), n);
      block()->size = uint32_t(n);
    } else if (on_heap()) {
      // Shorter than its block: kept there, for the next long value.
      if (n > 0) std::memmove(block() + 1, bytes.data(), n);
      block()->size = uint32_t(n);
    } else {
      // A whole inline value (a Decentraland Transform, most of what a world holds) by a copy of
      // known size; bytes never overlap this object's own then: they would be all of them.
      if (n == kInline && bytes.data() != bytes_) {
        std::memcpy(bytes_, bytes.data(), kInline);
      } else if (n > 0) {
        std::memmove(bytes_, bytes.data(), n);
      }
      tag_ = uint8_t(n);
    }
  }
  void clear() {
    if (on_heap()) {
      block()->size = 0;
    } else {
      tag_ = 0;
    }
  }

  const uint8_t* data() const {
    return on_heap() ? reinterpret_cast<const uint8_t*>(block() + 1) : bytes_;
  }
  size_t size() const { return on_heap() ? block()->size : tag_; }
  bool empty() const { return size() == 0; }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size(); }
  std::span<const uint8_t> span() const { return {data(), size()}; }
  operator std::span<const uint8_t>() const { return span(); }

  friend bool operator==(const SmallBytes& a, std::span<const uint8_t> b) {
    return a.size() == b.size() && (b.empty() || std::memcmp(a.data(), b.data(), b.size()) == 0);
  }

 private:
  // A value longer than kInline: a heap block, its bytes after this header.
  struct Block {
    uint32_t size;
    uint32_t capacity;
  };
  static constexpr uint8_t kOnHeap = 0xff;  // tag_: the bytes hold a Block pointer
  static_assert(kInline < kOnHeap && kInline >= sizeof(Block*));

  bool on_heap() const { return tag_ == kOnHeap; }
  Block* block() const {
    Block* b;
    std::memcpy(&b, bytes_, sizeof b);
    return b;
  }
  void set_block(Block* b) {
    std::memcpy(bytes_, &b, sizeof b);
    tag_ = kOnHeap;
  }
  void release() {
    if (on_heap()) ::operator delete(block());
    tag_ = 0;
  }
  void take(SmallBytes& other) noexcept {
    std::memcpy(bytes_, other.bytes_, sizeof bytes_);
    tag_ = other.tag_;
    other.tag_ = 0;
  }

  // 45 bytes, byte-aligned, so that a Transform's value and its entity's bookkeeping share one
  // cache line (dcl_state.h).
  uint8_t bytes_[kInline];
  uint8_t tag_ = 0;  // the size of a value in bytes_ (at most kInline), or kOnHeap
};

}  // namespace tprop
