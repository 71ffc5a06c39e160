// The store's value log (StoreChanges::value_records): a copy of each listed slot's values, as
// the setters left them, one per StoreChanges::values entry, so that a consumer reads them in a
// row instead of from scattered records. Checked against the records themselves, which the
// setters write independently.
#include "entity_store.h"

#include <gtest/gtest.h>

#include <random>

namespace tprop {
namespace {

// Each logged entry is the listed slot's values and components as its record has them now.
::testing::AssertionResult logged_as_records(const EntityStore& store, const StoreChanges& c) {
  if (c.value_records.size() != c.values.size())
    return ::testing::AssertionFailure()
           << c.value_records.size() << " records logged for " << c.values.size() << " values";
  for (size_t k = 0; k < c.values.size(); ++k) {
    const uint32_t slot = c.values[k];
    const ValueSnapshot& v = c.value_records[k];
    if (v.translation != store.translation_at(slot) || v.rotation != store.rotation_at(slot) ||
        v.scale != store.scale_at(slot) ||
        v.non_uniform_scale != store.non_uniform_scale_at(slot) ||
        v.components() != store.mask_at(slot))
      return ::testing::AssertionFailure() << "entry " << k << " (slot " << slot
                                           << ") is not what the slot holds";
  }
  return ::testing::AssertionSuccess();
}

// A store that logs whatever its size (its default logs from kValueLogSlots slots).
EntityStore store_of(EntityId entities) {
  EntityStore store;
  store.set_value_log_threshold(0);
  for (EntityId e = 1; e <= entities; ++e) {
    store.create(e);
    store.set_translation(e, float3(float(e), 0, 0));
    store.set_rotation(e, quat(1, 0, 0, 0));
    store.set_scale(e, 1.0f);
  }
  (void)store.take_changes();
  return store;
}

TEST(EntityStoreValueLog, StoresBelowTheThresholdLogFromTheFrameAfterItIsLowered) {
  EntityStore store;  // default threshold: far above these 20 slots
  for (EntityId e = 1; e <= 20; ++e) {
    store.create(e);
    store.set_translation(e, float3(0));
  }
  (void)store.take_changes();
  store.set_translation(4, float3(1));
  EXPECT_TRUE(store.take_changes().value_records.empty());
  // Lowered mid-frame, with a value listed already: from the next frame on.
  store.set_translation(4, float3(2));
  store.set_value_log_threshold(20);
  store.set_translation(5, float3(3));
  StoreChanges c = store.take_changes();
  EXPECT_EQ(c.values.size(), 2u);
  EXPECT_TRUE(c.value_records.empty());
  store.set_translation(5, float3(4));
  c = store.take_changes();
  EXPECT_TRUE(logged_as_records(store, c));
  EXPECT_EQ(c.value_records.size(), 1u);
  // Raised above the store's size: nothing logged from the next frame.
  store.set_value_log_threshold(21);
  store.set_translation(6, float3(5));
  EXPECT_TRUE(store.take_changes().value_records.empty());
}

TEST(EntityStoreValueLog, EachListedSlotCarriesItsLastValuesOfTheFrame) {
  EntityStore store = store_of(10);
  // Several setters on one entity, in any order, and one set twice: the entry holds the last.
  store.set_translation(3, float3(1, 2, 3));
  store.set_rotation(3, quat(0, 1, 0, 0));
  store.set_translation(5, float3(7));
  store.set_translation(3, float3(4, 5, 6));
  store.set_scale(5, 2.5f);
  store.set_trs_at(store.slot_of(8), float3(9), quat(0, 0, 1, 0), 3.0f);
  store.set_trs_at(store.slot_of(8), float3(10), quat(0, 0, 0, 1), 4.0f);
  const StoreChanges c = store.take_changes();
  ASSERT_EQ(c.values, (std::vector<uint32_t>{store.slot_of(3), store.slot_of(5), store.slot_of(8)}));
  ASSERT_TRUE(logged_as_records(store, c));
  EXPECT_EQ(c.value_records[0].translation, float3(4, 5, 6));
  EXPECT_EQ(c.value_records[0].rotation, quat(0, 1, 0, 0));
  EXPECT_EQ(c.value_records[1].scale, 2.5f);
  EXPECT_EQ(c.value_records[2].translation, float3(10));
  EXPECT_EQ(c.value_records[2].scale, 4.0f);
  EXPECT_EQ(c.value_records[2].components(), store.mask_at(store.slot_of(8)));
}

TEST(EntityStoreValueLog, SlotsReshapedAfterTheirValueChangeTakeTheirEntriesAlong) {
  // Reshaped slots leave `values` (a component added, the entity destroyed): their entries go
  // with them, so that the rest stay paired, under the few-spoiled filter and past it (65).
  for (const EntityId reshaped : {3u, 65u}) {
    SCOPED_TRACE(reshaped);
    EntityStore store = store_of(400);
    for (EntityId e = 1; e <= 400; ++e) store.set_translation(e, float3(float(e) * 2, 1, 0));
    for (EntityId e = 1; e <= reshaped; ++e) {
      if (e % 2) {
        store.add(e * 5, Component::NonUniformScale);
      } else {
        store.destroy(e * 5);
      }
    }
    // A value change after the reshape lists nothing more (the slot is listed as changed).
    store.set_translation(5, float3(-1));
    const StoreChanges c = store.take_changes();
    EXPECT_EQ(c.values.size(), size_t(400 - reshaped));
    EXPECT_TRUE(logged_as_records(store, c));
  }
}

TEST(EntityStoreValueLog, AFrameThatChangesMoreThanTheLogHoldsReadsTheRecords) {
  // At most max(4096, slots / 8) entries: past that the log is given up for the frame (the
  // records are then read in about slot order anyway) and kept again the next.
  EntityStore store = store_of(5000);
  for (EntityId e = 1; e <= 4096; ++e) store.set_translation(e, float3(1));
  StoreChanges c = store.take_changes();
  EXPECT_EQ(c.values.size(), 4096u);
  EXPECT_TRUE(logged_as_records(store, c));
  for (EntityId e = 1; e <= 4097; ++e) store.set_translation(e, float3(2));
  store.set_translation(4, float3(3));  // a listed slot's later value, with the log given up
  c = store.take_changes();
  EXPECT_EQ(c.values.size(), 4097u);
  EXPECT_TRUE(c.value_records.empty());
  store.set_translation(9, float3(5));
  c = store.take_changes();
  EXPECT_TRUE(logged_as_records(store, c));
  EXPECT_EQ(c.values.size(), 1u);
}

TEST(EntityStoreValueLog, TheLastFramesRecordsStayWhileTheNextFrameIsLogged) {
  // The records handed out stay valid (and unchanged) until the next take_changes(), while the
  // setters of the frame after log into the other buffer.
  EntityStore store = store_of(50);
  for (EntityId e = 1; e <= 50; ++e) store.set_translation(e, float3(float(e)));
  const StoreChanges first = store.take_changes();
  for (EntityId e = 1; e <= 50; ++e) store.set_translation(e, float3(-float(e)));
  for (size_t k = 0; k < first.values.size(); ++k)
    EXPECT_EQ(first.value_records[k].translation, float3(float(store.id_at(first.values[k]))));
  EXPECT_TRUE(logged_as_records(store, store.take_changes()));
}

TEST(EntityStoreValueLog, RandomEditsLogWhatTheRecordsHold) {
  // Value setters of every kind mixed with component changes, destroys and creations that reuse
  // slots, over many frames: every frame's log is its records.
  std::mt19937 rng(11);
  EntityStore store = store_of(300);
  EntityId next = 301;
  auto any = [&] { return EntityId(1 + rng() % (next - 1)); };
  for (int frame = 0; frame < 200; ++frame) {
    for (int k = int(rng() % 120); k > 0; --k) {
      const EntityId e = any();
      switch (rng() % 9) {
        case 0: store.set_translation(e, float3(float(rng() % 100))); break;
        case 1: store.set_rotation(e, quat(0, 0, 1, 0)); break;
        case 2: store.set_scale(e, float(rng() % 7)); break;
        case 3: store.set_non_uniform_scale(e, float3(2, 3, float(rng() % 5))); break;
        case 4:
          if (store.contains(e))
            store.set_trs_at(store.slot_of(e), float3(float(k)), quat(1, 0, 0, 0), float(k));
          break;
        case 5: store.add(e, Component::Static); break;
        case 6: store.remove(e, Component::Scale); break;
        case 7: store.destroy(e); break;
        default: store.create(next++); break;
      }
    }
    const StoreChanges c = store.take_changes();
    ASSERT_TRUE(logged_as_records(store, c)) << "frame " << frame;
  }
}

}  // namespace
}  // namespace tprop
