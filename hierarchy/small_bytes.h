// The bytes of a CRDT value, with room for a Decentraland Transform (44 bytes) in place.
//
// A world holds a Transform per entity and overwrites it on every move: as a std::vector each
// value was a heap block of its own (an allocation when an entity appears, and a cache miss on
// another line at every message). Values up to kInline bytes live inside the object; longer ones
// (other components, malformed Transforms) go to the heap, whose block is reused while it is
// large enough.
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
      if (n > capacity_) {
        // A fresh block before the old one goes: bytes may point into the old one.
        uint8_t* block = new uint8_t[n];
        std::memcpy(block, bytes.data(), n);
        release();
        store_.heap = block;
        capacity_ = uint32_t(n);
        size_ = uint32_t(n);
        return;
      }
      std::memmove(store_.heap, bytes.data(), n);
    } else if (n > 0) {
      std::memmove(capacity_ ? store_.heap : store_.in_place, bytes.data(), n);
    }
    size_ = uint32_t(n);
  }
  void clear() { size_ = 0; }

  const uint8_t* data() const { return capacity_ ? store_.heap : store_.in_place; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t* begin() const { return data(); }
  const uint8_t* end() const { return data() + size_; }
  std::span<const uint8_t> span() const { return {data(), size_}; }
  operator std::span<const uint8_t>() const { return span(); }

  friend bool operator==(const SmallBytes& a, std::span<const uint8_t> b) {
    return a.size() == b.size() && (b.empty() || std::memcmp(a.data(), b.data(), b.size()) == 0);
  }

 private:
  void release() {
    if (capacity_) delete[] store_.heap;
    capacity_ = 0;
    size_ = 0;
  }
  void take(SmallBytes& other) noexcept {
    size_ = other.size_;
    capacity_ = other.capacity_;
    std::memcpy(&store_, &other.store_, sizeof store_);
    other.size_ = other.capacity_ = 0;
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = 0;  // of the heap block; 0: the bytes are in place
  union Store {
    uint8_t in_place[kInline];
    uint8_t* heap;
  } store_{};
};

}  // namespace tprop
