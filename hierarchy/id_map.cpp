#include "id_map.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <new>
#include <utility>

namespace tprop {

namespace {
// Old slots looked at per set() or erase() while growing: the old table has twice as many
// slots as entries, and the new one fills after as many more inserts, so 4 finish it in time.
constexpr size_t kDrainBudget = 8;
// Keys below this may always go to the direct array (16 KiB of it at most, before the map's
// size raises the bound), and one growth adds at most kDirectStep keys (256 KiB zero-filled).
constexpr size_t kDirectMin = 4096;
constexpr size_t kDirectStep = size_t(1) << 16;
// The direct array grows only while at least one of this many of its keys is held (IdMap).
constexpr size_t kDirectSparsest = 8;
}  // namespace

size_t IdHash::Table::index_of(uint32_t key) const {
  if (slots.empty()) return 0;
  for (size_t i = home(key);; i = (i + 1) & mask) {
    const Slot& s = slots[i];
    if (s.stored == 0) return slots.size();
    if (s.key == key) return i;
  }
}

void IdHash::Table::insert_new(uint32_t key, uint32_t value) {
  for (size_t i = home(key);; i = (i + 1) & mask)
    if (slots[i].stored == 0) {
      slots[i] = {key, value + 1};
      ++size;
      return;
    }
}

void IdHash::Table::erase_at(size_t i) {
  // Backward-shift deletion: pull later members of the probe run into the hole when the hole
  // lies between their home and their current place.
  for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    if (slots[j].stored == 0) break;
    const size_t h = home(slots[j].key);
    const bool movable = (j > i) ? (h <= i || h > j) : (h <= i && h > j);
    if (movable) {
      slots[i] = slots[j];
      i = j;
    }
  }
  slots[i].stored = 0;
  --size;
}

uint32_t IdHash::find(uint32_t key) const {
  if (const size_t i = table_.index_of(key); i < table_.slots.size())
    return table_.slots[i].stored - 1;
  if (old_.size == 0) return kMissing;
  const size_t i = old_.index_of(key);
  return i < old_.slots.size() ? old_.slots[i].stored - 1 : kMissing;
}

void IdHash::set(uint32_t key, uint32_t value) {
  assert(value != kMissing);
  if (old_.size) drain(kDrainBudget);
  if (const size_t i = table_.index_of(key); i < table_.slots.size()) {
    table_.slots[i].stored = value + 1;
    return;
  }
  if (old_.size) {
    // A key lives in one table: an entry not drained yet moves over now.
    if (const size_t i = old_.index_of(key); i < old_.slots.size()) {
      old_.erase_at(i);
      --size_;
    }
  }
  if ((table_.size + 1) * 2 > table_.slots.size()) grow();
  table_.insert_new(key, value);
  ++size_;
}

uint32_t IdHash::insert_if_absent(uint32_t key, uint32_t value) {
  assert(value != kMissing);
  if (old_.size) drain(kDrainBudget);
  if (const size_t i = table_.index_of(key); i < table_.slots.size())
    return table_.slots[i].stored - 1;
  if (old_.size) {
    if (const size_t i = old_.index_of(key); i < old_.slots.size()) return old_.slots[i].stored - 1;
  }
  if ((table_.size + 1) * 2 > table_.slots.size()) grow();
  table_.insert_new(key, value);
  ++size_;
  return kMissing;
}

uint32_t IdHash::take(uint32_t key) {
  if (old_.size) drain(kDrainBudget);
  if (const size_t i = table_.index_of(key); i < table_.slots.size()) {
    const uint32_t value = table_.slots[i].stored - 1;
    table_.erase_at(i);
    --size_;
    return value;
  }
  if (old_.size == 0) return kMissing;
  const size_t i = old_.index_of(key);
  if (i == old_.slots.size()) return kMissing;
  const uint32_t value = old_.slots[i].stored - 1;
  old_.erase_at(i);
  --size_;
  return value;
}

void IdHash::clear() {
  table_ = Table{};
  old_ = Table{};
  drain_at_ = 0;
  size_ = 0;
}

void IdHash::grow() {
  // A drain still under way when the new table fills (not with kDrainBudget) finishes first.
  drain(SIZE_MAX);
  const size_t capacity = table_.slots.empty() ? 16 : table_.slots.size() * 2;
  // The new table first: out of memory, the map stays as it was (an empty table beside a full
  // one would be probed forever).
  Table fresh;
  fresh.slots.assign_zeroed(capacity);
  fresh.mask = capacity - 1;
  old_ = std::move(table_);
  table_ = std::move(fresh);
  drain_at_ = 0;
  if (old_.size == 0) old_ = Table{};
}

void IdHash::drain(size_t budget) {
  while (old_.size && budget--) {
    assert(drain_at_ < old_.slots.size());
    const Slot s = old_.slots[drain_at_];
    if (s.stored == 0) {
      ++drain_at_;
      continue;
    }
    // Erasing may pull a later entry of the run into this slot: look at it again.
    old_.erase_at(drain_at_);
    table_.insert_new(s.key, s.stored - 1);
  }
  if (old_.size == 0 && !old_.slots.empty()) {
    old_ = Table{};
    table_.slots.advise_huge_pages();  // now that its pages are all in (see assign_zeroed)
  }
}

size_t IdMap::direct_bound() const {
  return std::max({kDirectMin, 2 * (size() + 1), 2 * reserved_});
}

bool IdMap::direct_holds(uint32_t key) {
  if (key < direct_.size()) return true;
  const size_t bound = direct_bound();
  if (key >= bound) return false;
  // Doubling, so that a small map stays small (a map of one key costs that key's index), but
  // at most kDirectStep at a time: a doubling zero-filled at once, 32 MB past 8 million ids,
  // would be a hitch of its own. (The capacity beneath doubles, or grows in place once mapped.)
  const size_t grown = direct_.size() + std::min(direct_.size(), kDirectStep);
  const size_t n = std::min(bound, std::max(size_t(key) + 1, grown));
  if (n > kDirectMin && n > 2 * reserved_ && n > kDirectSparsest * (direct_count_ + 1))
    return false;
  try {
    direct_.resize(n);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

// A key the hash took before the direct array reached it stays in the hash: every path below
// looks there before it writes a key into the direct array.
void IdMap::set(uint32_t key, uint32_t value) {
  assert(value != kMissing);
  if (key < direct_.size() && direct_[key] != 0) {
    direct_[key] = value + 1;
    return;
  }
  // One probe for the keys that can only be in the hash.
  if (key >= direct_.size() && key >= direct_bound()) return hash_.set(key, value);
  if ((hash_.size() == 0 || hash_.find(key) == kMissing) && direct_holds(key)) {
    direct_[key] = value + 1;
    ++direct_count_;
    return;
  }
  hash_.set(key, value);
}

uint32_t IdMap::insert_if_absent(uint32_t key, uint32_t value) {
  assert(value != kMissing);
  if (key < direct_.size() && direct_[key] != 0) return direct_[key] - 1;
  if (key >= direct_.size() && key >= direct_bound()) return hash_.insert_if_absent(key, value);
  if (hash_.size() != 0)
    if (const uint32_t held = hash_.find(key); held != kMissing) return held;
  if (direct_holds(key)) {
    direct_[key] = value + 1;
    ++direct_count_;
    return kMissing;
  }
  return hash_.insert_if_absent(key, value);
}

uint32_t IdMap::take(uint32_t key) {
  if (key < direct_.size() && direct_[key] != 0) {
    const uint32_t value = direct_[key] - 1;
    direct_[key] = 0;
    --direct_count_;
    return value;
  }
  return hash_.size() != 0 ? hash_.take(key) : kMissing;
}

void IdMap::clear() {
  direct_ = SlotVector<uint32_t>{};
  direct_count_ = 0;
  reserved_ = 0;
  hash_.clear();
}

void IdMap::reserve(size_t count) { reserved_ = std::max(reserved_, count); }

}  // namespace tprop
