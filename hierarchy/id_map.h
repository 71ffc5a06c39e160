// IdMap: 32-bit keys (entity ids) to 32-bit values (slots), built for 10 million entities.
//
// Keys below a bound that follows the map's size (twice its entries, or what reserve() named,
// at least 4,096) sit in a direct array, 4 bytes a key, while it holds at least one key in eight
// of its length (beyond what reserve() named): most applications number their
// entities densely (an ECS's entity indices, glTF node indices, generated scenes), and a
// setter by id then finds its slot with one load, at the line its neighbours use. Hashed, each
// look-up was a cache miss of its own wherever the key's neighbours were: 10,000 set_translation
// calls on every 100th entity of a million took 2.7 ms, ten times Propagator::update's frame.
// Every other key goes to IdHash below, so arbitrary ids cost what they did. Sparse keys below
// the bound stay hashed too: a Decentraland world's ids (scene << 16 | number, a few thousand
// in every 65,536) had the array reach over scenes 0 to 30 at a million entities, 8 MB for
// 31,000 keys, grown a step a frame as their numbers rose (on this project's VM 12% of the
// world's ingest, the kernel clearing each new huge page).
//
// IdHash: open addressing and linear probing, 8 bytes a slot: std::unordered_map spends about
// five times that per entry, which matters at 10 million entities. Deletion shifts the probe
// run back, so there are no tombstones and lookups stay short. Growth is incremental: the full
// table becomes the old one, and every later set() or erase() moves a few of its entries into
// the new, twice as large table, while find() looks in both; the new table's pages come in as
// they are first written (SlotVector::assign_zeroed). Growing past 8 million ids at once
// (rehash, and a 256 MB table filled) was a 0.6 s hitch in the frame that spawned past them;
// now that frame pays 20 ms and the next ones a few ms each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>
#include "prefetch.h"
#include "slot_vector.h"

namespace tprop {

// The open-addressing table (above) that holds IdMap's keys beyond its direct array.
class IdHash {
 public:
  static constexpr uint32_t kMissing = 0xffffffffu;

  // Returns the value stored for key, or kMissing.
  uint32_t find(uint32_t key) const;
  // A hint that key is looked up soon: starts loading its home slot (in the new table only,
  // while one drains: the common case, and the old one empties within a few hundred edits).
  void prefetch(uint32_t key) const {
    if (!table_.slots.empty()) prefetch_line(&table_.slots[table_.home(key)]);
  }
  // Inserts or overwrites. value must not be kMissing.
  void set(uint32_t key, uint32_t value);
  // Inserts key -> value unless key is present: kMissing when it inserted, else the value
  // stored (left as it is). One probe where find() then set() would make two, each a cache
  // miss in a big map. value must not be kMissing.
  uint32_t insert_if_absent(uint32_t key, uint32_t value);
  // Erases key and returns the value it had (kMissing when absent): find() and erase() in one
  // probe.
  uint32_t take(uint32_t key);
  void clear();
  // Room for one more key: the next set() or insert_if_absent() allocates nothing.
  void make_room_for_one() {
    if ((table_.size + 1) * 2 > table_.slots.size()) grow();
  }
  size_t size() const { return size_; }

 private:
  // All-zero bytes are an empty slot, so that a new table needs no filling (see grow()).
  struct Slot {
    uint32_t key;
    uint32_t stored;  // the value + 1; 0: empty
  };
  // One open-addressing table.
  struct Table {
    SlotVector<Slot> slots;
    size_t mask = 0;
    size_t size = 0;

    size_t home(uint32_t key) const {
      // Fibonacci hashing spreads sequential ids, the common case, across the table.
      return static_cast<size_t>((uint64_t(key) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
    }
    size_t index_of(uint32_t key) const;  // slots.size() when absent
    void insert_new(uint32_t key, uint32_t value);  // key absent, room assured
    void erase_at(size_t i);
  };
  void grow();
  // Moves up to `budget` slots' worth of the old table into the new one.
  void drain(size_t budget);

  Table table_;
  Table old_;            // being drained into table_ (empty when not growing)
  size_t drain_at_ = 0;  // old_'s slots before this one are drained
  size_t size_ = 0;      // both tables
};

// The map the store and the loaders use: IdHash's interface, dense keys in a direct array.
class IdMap {
 public:
  static constexpr uint32_t kMissing = IdHash::kMissing;

  uint32_t find(uint32_t key) const {
    if (key < direct_.size() && direct_[key] != 0) return direct_[key] - 1;
    return hash_.size() != 0 ? hash_.find(key) : kMissing;
  }
  void prefetch(uint32_t key) const {
    if (key < direct_.size()) {
      prefetch_line(&direct_[key]);
    } else {
      hash_.prefetch(key);
    }
  }
  // As IdHash's: insert or overwrite; insert unless present; find and erase in one.
  void set(uint32_t key, uint32_t value);
  uint32_t insert_if_absent(uint32_t key, uint32_t value);
  bool erase(uint32_t key) { return take(key) != kMissing; }
  uint32_t take(uint32_t key);
  void clear();
  // Room for `count` keys: dense keys below twice that go to the direct array from now on.
  void reserve(size_t count);
  // Room for one more key: the next set() or insert_if_absent() cannot fail for lack of memory
  // (for callers that must not fail half way through an edit; the direct array may still try
  // to grow, and takes the hash table's room when it cannot). Throws std::bad_alloc, leaving
  // the map whole.
  void make_room_for_one() { hash_.make_room_for_one(); }
  size_t size() const { return direct_count_ + hash_.size(); }
  // How many keys the direct array spans (4 bytes each, held or not).
  size_t direct_span() const { return direct_.size(); }

 private:
  // Keys below it may go to the direct array.
  size_t direct_bound() const;
  // Whether key lies in the direct array, grown to hold it where the bound allows (and memory:
  // out of memory the key goes to the hash, which make_room_for_one() may have readied).
  bool direct_holds(uint32_t key);

  SlotVector<uint32_t> direct_;  // key -> value + 1; 0: not here (perhaps in hash_)
  size_t direct_count_ = 0;
  size_t reserved_ = 0;
  IdHash hash_;
};

}  // namespace tprop
