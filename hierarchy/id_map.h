// A hash map from 32-bit keys to 32-bit values with open addressing and linear probing, 8 bytes
// a slot: std::unordered_map spends about five times that per entry, which matters at 10 million
// entities. Deletion shifts the probe run back, so there are no tombstones and lookups stay short.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>
#include "slot_vector.h"

namespace tprop {

class IdMap {
 public:
  static constexpr uint32_t kMissing = 0xffffffffu;

  // Returns the value stored for key, or kMissing.
  uint32_t find(uint32_t key) const;
  // A hint that key is looked up soon: starts loading its home slot.
  void prefetch(uint32_t key) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(key)]);
  }
  // Inserts or overwrites. value must not be kMissing.
  void set(uint32_t key, uint32_t value);
  // Returns whether key was present.
  bool erase(uint32_t key);
  void clear();
  void reserve(size_t count);
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t key;
    uint32_t value;  // kMissing marks an empty slot
  };
  size_t home(uint32_t key) const {
    // Fibonacci hashing spreads sequential ids, the common case, across the table.
    return static_cast<size_t>((uint64_t(key) * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void grow();

  SlotVector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tprop
