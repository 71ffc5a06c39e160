#include "id_map.h"

#include <cassert>

namespace tprop {

uint32_t IdMap::find(uint32_t key) const {
  if (slots_.empty()) return kMissing;
  for (size_t i = home(key);; i = (i + 1) & mask_) {
    const Slot& s = slots_[i];
    if (s.value == kMissing) return kMissing;
    if (s.key == key) return s.value;
  }
}

void IdMap::set(uint32_t key, uint32_t value) {
  assert(value != kMissing);
  if ((size_ + 1) * 2 > slots_.size()) grow();
  for (size_t i = home(key);; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.value == kMissing) {
      s = {key, value};
      ++size_;
      return;
    }
    if (s.key == key) {
      s.value = value;
      return;
    }
  }
}

bool IdMap::erase(uint32_t key) {
  if (slots_.empty()) return false;
  size_t i = home(key);
  for (;; i = (i + 1) & mask_) {
    if (slots_[i].value == kMissing) return false;
    if (slots_[i].key == key) break;
  }
  // Backward-shift deletion: pull later members of the probe run into the hole when the hole
  // lies between their home and their current place.
  for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
    if (slots_[j].value == kMissing) break;
    const size_t h = home(slots_[j].key);
    const bool movable = (j > i) ? (h <= i || h > j) : (h <= i && h > j);
    if (movable) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i].value = kMissing;
  --size_;
  return true;
}

void IdMap::clear() {
  slots_.clear();
  mask_ = 0;
  size_ = 0;
}

void IdMap::reserve(size_t count) {
  while (slots_.size() < count * 2) grow();
}

void IdMap::grow() {
  SlotVector<Slot> old = std::move(slots_);
  const size_t capacity = old.empty() ? 16 : old.size() * 2;
  slots_.assign(capacity, Slot{0, kMissing});
  mask_ = capacity - 1;
  size_ = 0;
  for (const Slot& s : old)
    if (s.value != kMissing) set(s.key, s.value);
}

}  // namespace tprop
