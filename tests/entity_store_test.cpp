#include "entity_store.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>

#include <gtest/gtest.h>

namespace tprop {
namespace {

std::vector<EntityId> sorted(std::vector<EntityId> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// A consumer that keeps state about a store between frames tells stores apart by identity(),
// not by address: a move keeps it (the entities go along), a copy, an assignment of other
// contents and what a move leaves behind get new ones, never 0 and never one seen before.
TEST(EntityStore, IdentityFollowsTheEntitiesNotTheAddress) {
  EntityStore a;
  a.create(1);
  const uint64_t first = a.identity();
  EXPECT_NE(first, 0u);
  EntityStore b;
  EXPECT_NE(b.identity(), first);
  EntityStore moved = std::move(a);
  EXPECT_EQ(moved.identity(), first);
  EXPECT_TRUE(moved.contains(1));
  EXPECT_NE(a.identity(), first) << "what the move left behind";
  EntityStore copy = moved;
  EXPECT_NE(copy.identity(), first);
  EXPECT_NE(copy.identity(), a.identity());
  const uint64_t before = moved.identity();
  moved = EntityStore{};  // a new scene in the same object
  EXPECT_NE(moved.identity(), before);
  const uint64_t assigned_from = b.identity();
  moved = b;
  EXPECT_NE(moved.identity(), assigned_from);
  EXPECT_NE(moved.identity(), before);
}

TEST(EntityStore, CreateRefusesADuplicateId) {
  EntityStore store;
  EXPECT_TRUE(store.create(7));
  EXPECT_FALSE(store.create(7));
  EXPECT_EQ(store.size(), 1u);
}

TEST(EntityStore, AcceptsTheWholeIdRange) {
  EntityStore store;
  EXPECT_TRUE(store.create(0));
  EXPECT_TRUE(store.create(0xffffffffu));
  EXPECT_TRUE(store.contains(0xffffffffu));
  EXPECT_TRUE(store.set_parent(0xffffffffu, 0));
  EXPECT_EQ(store.children(0), std::vector<EntityId>{0xffffffffu});
}

TEST(EntityStore, SettersOnAnUnknownEntityReportFailure) {
  EntityStore store;
  EXPECT_FALSE(store.set_translation(1, float3(1)));
  EXPECT_FALSE(store.set_parent(1, 2));
  EXPECT_FALSE(store.remove(1, Component::Translation));
  EXPECT_FALSE(store.destroy(1));
}

TEST(EntityStore, SetAddsAndRemoveDropsAComponent) {
  EntityStore store;
  store.create(1);
  EXPECT_FALSE(store.has(1, Component::Translation));
  store.set_translation(1, float3(1, 2, 3));
  EXPECT_TRUE(store.has(1, Component::Translation));
  EXPECT_EQ(store.translation_at(store.slot_of(1)), float3(1, 2, 3));
  store.remove(1, Component::Translation);
  EXPECT_FALSE(store.has(1, Component::Translation));
}

TEST(EntityStore, SetTrsAtWritesAWholeTransformAndSwapsTheScaleComponent) {
  EntityStore store;
  store.create(1);
  store.create(2);
  (void)store.take_changes();
  const uint32_t slot = store.slot_of(2);
  store.set_trs_at(slot, float3(1, 2, 3), quat(0, 0, 1, 0), float3(2, 3, 4));
  EXPECT_EQ(store.mask_at(slot), bit(Component::Translation) | bit(Component::Rotation) |
                                     bit(Component::NonUniformScale));
  EXPECT_EQ(store.translation_at(slot), float3(1, 2, 3));
  EXPECT_EQ(store.rotation_at(slot), quat(0, 0, 1, 0));
  EXPECT_EQ(store.non_uniform_scale_at(slot), float3(2, 3, 4));
  store.set_trs_at(slot, float3(4, 5, 6), quat(1, 0, 0, 0), 0.5f);
  EXPECT_EQ(store.mask_at(slot), bit(Component::Translation) | bit(Component::Rotation) |
                                     bit(Component::Scale));
  EXPECT_EQ(store.scale_at(slot), 0.5f);
  // A change of the scale's kind, listed once, and entity 1 untouched.
  const StoreChanges changes = store.take_changes();
  EXPECT_FALSE(changes.hierarchy);
  EXPECT_EQ(changes.slots, std::vector<uint32_t>{slot});
  EXPECT_TRUE(changes.values.empty());
  EXPECT_EQ(store.mask_at(store.slot_of(1)), 0u);
}

TEST(EntityStore, AddGivesDefaultValuesEvenAfterAnEarlierRemove) {
  EntityStore store;
  store.create(1);
  store.set_non_uniform_scale(1, float3(2, 3, 4));
  store.set_matrix(1, MatrixComponent::CompositeScale, float4x4(5.0f));
  store.remove(1, Component::NonUniformScale);
  store.remove(1, Component::CompositeScale);
  store.add(1, Component::NonUniformScale);
  store.add(1, Component::CompositeScale);
  EXPECT_EQ(store.non_uniform_scale_at(store.slot_of(1)), float3(1.0f));
  const RareComponents* rare = store.rare_at(store.slot_of(1));
  ASSERT_NE(rare, nullptr);
  EXPECT_EQ(rare->matrix[int(MatrixComponent::CompositeScale)], float4x4(1.0f));
}

TEST(EntityStore, RareRecordIsReleasedWhenTheLastRareComponentGoes) {
  EntityStore store;
  store.create(1);
  store.set_pivot(1, PivotComponent::RotationPivot, float3(1));
  EXPECT_NE(store.rare_at(store.slot_of(1)), nullptr);
  store.remove(1, Component::RotationPivot);
  EXPECT_EQ(store.rare_at(store.slot_of(1)), nullptr);
}

TEST(EntityStore, ChildListsFollowParent) {
  EntityStore store;
  for (EntityId e : {1, 2, 3, 4}) store.create(e);
  store.set_parent(2, 1);
  store.set_parent(3, 1);
  store.set_parent(4, 2);
  EXPECT_EQ(sorted(store.children(1)), (std::vector<EntityId>{2, 3}));
  EXPECT_EQ(store.children(2), std::vector<EntityId>{4});
  EXPECT_TRUE(store.children(3).empty());
}

TEST(EntityStore, ReparentMovesTheChildBetweenLists) {
  EntityStore store;
  for (EntityId e : {1, 2, 3}) store.create(e);
  store.set_parent(3, 1);
  store.set_parent(3, 2);
  EXPECT_TRUE(store.children(1).empty());
  EXPECT_EQ(store.children(2), std::vector<EntityId>{3});
  EXPECT_EQ(store.parent(3), EntityId(2));
}

TEST(EntityStore, MoveChildrenHandsTheWholeListToTheNewParent) {
  EntityStore store;
  for (EntityId e : {1, 2, 3, 4, 5, 6}) store.create(e);
  store.set_parent(2, 1);
  store.set_parent(3, 1);
  store.set_parent(4, 2);
  store.set_parent(5, 6);
  store.take_changes();
  store.move_children(1, 6);
  EXPECT_TRUE(store.children(1).empty());
  EXPECT_EQ(sorted(store.children(6)), (std::vector<EntityId>{2, 3, 5}));
  EXPECT_EQ(store.parent(2), EntityId(6));
  EXPECT_EQ(store.parent(3), EntityId(6));
  EXPECT_EQ(store.children(2), std::vector<EntityId>{4});  // grandchildren stay
  const StoreChanges c = store.take_changes();
  EXPECT_TRUE(c.hierarchy);
  EXPECT_EQ(sorted(c.structural), sorted({store.slot_of(2), store.slot_of(3)}));
  EXPECT_EQ(store.previous_parent(2), EntityId(6));
  // Each child is unlinked as set_parent would: moving one on leaves the others in place.
  store.set_parent(3, 1);
  EXPECT_EQ(sorted(store.children(6)), (std::vector<EntityId>{2, 5}));
  store.take_changes();
  store.move_children(4, 1);  // no children: nothing changes
  EXPECT_FALSE(store.take_changes().hierarchy);
}

TEST(EntityStore, RemovingParentLeavesTheChildList) {
  EntityStore store;
  for (EntityId e : {1, 2}) store.create(e);
  store.set_parent(2, 1);
  store.remove(2, Component::Parent);
  EXPECT_TRUE(store.children(1).empty());
  EXPECT_FALSE(store.parent(2).has_value());
}

TEST(EntityStore, DestroyedParentDetachesItsChildren) {
  EntityStore store;
  for (EntityId e : {1, 2, 3, 4}) store.create(e);
  store.set_parent(2, 1);
  store.set_parent(3, 1);
  store.set_parent(4, 2);
  store.destroy(1);
  EXPECT_FALSE(store.has(2, Component::Parent));
  EXPECT_FALSE(store.has(3, Component::Parent));
  EXPECT_EQ(store.parent(4), EntityId(2));  // grandchildren keep their parent
  // A new entity with the old id does not adopt the detached children.
  store.create(1);
  EXPECT_TRUE(store.children(1).empty());
}

// By slot as by id: the entity goes, its children lose their Parent, its own parent's list
// loses it, and its id and slot are free again.
TEST(EntityStore, DestroyAtASlotDoesWhatDestroyByIdDoes) {
  EntityStore by_id, by_slot;
  for (EntityStore* store : {&by_id, &by_slot}) {
    for (EntityId e : {1, 2, 3, 4, 5}) store->create(e);
    store->set_parent(2, 1);
    store->set_parent(3, 2);
    store->set_parent(4, 2);
    store->set_parent(5, 1);
    (void)store->take_changes();
  }
  by_id.destroy(2);
  by_slot.destroy_at(by_slot.slot_of(2));
  for (EntityStore* store : {&by_id, &by_slot}) {
    EXPECT_FALSE(store->contains(2));
    EXPECT_FALSE(store->has(3, Component::Parent));
    EXPECT_FALSE(store->has(4, Component::Parent));
    EXPECT_EQ(store->children(1), std::vector<EntityId>{5});
    const StoreChanges changes = store->take_changes();
    EXPECT_TRUE(changes.hierarchy);
    std::vector<uint32_t> structural = changes.structural;
    std::sort(structural.begin(), structural.end());
    EXPECT_EQ(structural, (std::vector<uint32_t>{1, 2, 3}));  // the slots of 2, 3 and 4
  }
  EXPECT_EQ(by_slot.create_at_slot(2), 1u);  // the id and the slot are free again
}

TEST(EntityStore, ChildOfAnUnknownParentAttachesWhenThatParentIsCreated) {
  EntityStore store;
  store.create(2);
  store.set_parent(2, 1);
  EXPECT_TRUE(store.has(2, Component::Parent));
  EXPECT_TRUE(store.children(1).empty());  // no entity 1 yet
  store.create(1);
  EXPECT_EQ(store.children(1), std::vector<EntityId>{2});
}

TEST(EntityStore, PreviousParentIsTheParentAsOfTheLastUpdate) {
  EntityStore store;
  for (EntityId e : {1, 2, 3}) store.create(e);
  store.set_parent(3, 1);
  EXPECT_FALSE(store.previous_parent(3).has_value());
  store.take_changes();
  EXPECT_EQ(store.previous_parent(3), EntityId(1));
  store.set_parent(3, 2);
  EXPECT_EQ(store.previous_parent(3), EntityId(1));
  store.take_changes();
  EXPECT_EQ(store.previous_parent(3), EntityId(2));
  store.remove(3, Component::Parent);
  store.take_changes();
  EXPECT_FALSE(store.previous_parent(3).has_value());
}

TEST(EntityStore, ChangesListValueEditsAndFlagHierarchyEdits) {
  EntityStore store;
  for (EntityId e : {1, 2}) store.create(e);
  store.take_changes();
  store.set_translation(2, float3(1));
  store.set_rotation(2, quat(1, 0, 0, 0));
  StoreChanges c = store.take_changes();
  EXPECT_FALSE(c.hierarchy);
  EXPECT_EQ(c.slots, std::vector<uint32_t>{store.slot_of(2)});  // components added
  store.set_translation(2, float3(2));
  c = store.take_changes();
  EXPECT_FALSE(c.hierarchy);
  EXPECT_EQ(c.values, std::vector<uint32_t>{store.slot_of(2)});
  store.set_parent(2, 1);
  c = store.take_changes();
  EXPECT_TRUE(c.hierarchy);
  store.set_parent(2, 1);  // the same parent again is no change
  EXPECT_FALSE(store.take_changes().hierarchy);
}

TEST(EntityStore, NewValuesOfPresentComponentsAreListedAsValuesAlone) {
  EntityStore store;
  for (EntityId e : {1, 2, 3, 4}) store.create(e);
  store.set_translation(1, float3(1));
  store.set_scale(2, 2.0f);
  store.set_trs_at(store.slot_of(3), float3(1), quat(1, 0, 0, 0), float3(2));
  store.set_non_uniform_scale(4, float3(3));
  store.set_rotation(4, quat(0, 1, 0, 0));
  (void)store.take_changes();

  store.set_translation(1, float3(5));
  store.set_translation(1, float3(6));  // twice: listed once
  store.set_scale(2, 3.0f);
  store.set_trs_at(store.slot_of(3), float3(2), quat(0, 0, 1, 0), float3(4));
  store.set_non_uniform_scale(4, float3(1));
  store.set_rotation(4, quat(0, 0, 0, 1));
  const StoreChanges c = store.take_changes();
  EXPECT_FALSE(c.hierarchy);
  EXPECT_TRUE(c.slots.empty());
  std::vector<uint32_t> expected{store.slot_of(1), store.slot_of(2), store.slot_of(3),
                                 store.slot_of(4)};
  std::vector<uint32_t> values = c.values;
  std::sort(values.begin(), values.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(values, expected);
}

TEST(EntityStore, AnyOtherChangeListsTheSlotAsChangedAndNotAsValues) {
  EntityStore store;
  for (EntityId e : {1, 2, 3, 4, 5, 6}) {
    store.create(e);
    store.set_translation(e, float3(1));
  }
  store.set_scale(3, 1.0f);
  (void)store.take_changes();

  store.set_rotation(1, quat(0, 1, 0, 0));        // a component added by its setter
  store.set_translation(2, float3(2));            // a value, then a tag added
  store.add(2, Component::Static);
  store.set_trs_at(store.slot_of(3), float3(1), quat(1, 0, 0, 0), float3(2));  // scale kind
  store.set_translation(4, float3(3));            // a value, then a removal
  store.remove(4, Component::Translation);
  store.set_translation(5, float3(4));            // a value, then a new Parent
  store.set_parent(5, 1);
  store.set_translation(6, float3(5));            // a value, then destroyed
  store.destroy(6);
  const uint32_t dead = store.slot_of(6);
  EXPECT_EQ(dead, EntityStore::kNoSlot);
  const StoreChanges c = store.take_changes();
  EXPECT_TRUE(c.values.empty());
  for (EntityId e : {1, 2, 3, 4, 5})
    EXPECT_NE(std::find(c.slots.begin(), c.slots.end(), store.slot_of(e)), c.slots.end()) << e;
  EXPECT_EQ(c.slots.size(), 6u);  // and the destroyed entity's slot

  // The next frame starts clean: a value change is listed as values again.
  store.set_translation(2, float3(7));
  const StoreChanges next = store.take_changes();
  EXPECT_TRUE(next.slots.empty());
  EXPECT_EQ(next.values, std::vector<uint32_t>{store.slot_of(2)});
}

// Only the slots changed in another way leave `values`: the rest of the frame's value changes
// stay listed, in the order they were made.
TEST(EntityStore, ASlotReshapedAfterItsValueChangeLeavesValuesAndTheOthersStay) {
  EntityStore store;
  for (EntityId e : {1, 2, 3, 4}) {
    store.create(e);
    store.set_translation(e, float3(1));
  }
  (void)store.take_changes();
  store.set_translation(4, float3(2));
  store.set_translation(1, float3(2));
  store.set_translation(3, float3(2));
  store.add(1, Component::Static);  // listed as values, then reshaped
  store.set_translation(2, float3(2));
  const StoreChanges c = store.take_changes();
  EXPECT_EQ(c.values,
            (std::vector<uint32_t>{store.slot_of(4), store.slot_of(3), store.slot_of(2)}));
  EXPECT_EQ(c.slots, std::vector<uint32_t>{store.slot_of(1)});
  // A frame of values alone lists them all again, the reshaped one included.
  for (EntityId e : {1, 2, 3, 4}) store.set_translation(e, float3(3));
  EXPECT_EQ(store.take_changes().values.size(), 4u);
}

// The store lists the first 64 such slots of a frame and filters `values` through them (a
// hashed bit a slot: most slots pass on their bit alone, some share a bit with a reshaped one);
// past 64 it reads every listed slot's record. Either way exactly the reshaped slots leave
// `values`, and the others keep their order.
TEST(EntityStore, SlotsReshapedAfterTheirValueChangesLeaveValuesHoweverMany) {
  for (const uint32_t reshaped : {1u, 63u, 64u, 65u, 700u}) {
    SCOPED_TRACE(reshaped);
    EntityStore store;
    constexpr EntityId kEntities = 5000;
    for (EntityId e = 1; e <= kEntities; ++e) {
      store.create(e);
      store.set_translation(e, float3(1));
    }
    (void)store.take_changes();
    for (EntityId e = 1; e <= kEntities; ++e) store.set_translation(e, float3(2));
    // Every 7th entity from the 3rd, `reshaped` of them, gains Static after its value change.
    std::vector<uint32_t> want_values, want_slots;
    for (EntityId e = 1; e <= kEntities; ++e) {
      if (e % 7 == 3 && want_slots.size() < reshaped) {
        store.add(e, Component::Static);
        want_slots.push_back(store.slot_of(e));
      } else {
        want_values.push_back(store.slot_of(e));
      }
    }
    const StoreChanges c = store.take_changes();
    EXPECT_EQ(c.values, want_values);
    EXPECT_EQ(c.slots, want_slots);
    // The next frame starts with nothing spoiled: a value frame lists everything again.
    for (EntityId e = 1; e <= kEntities; ++e) store.set_translation(e, float3(3));
    EXPECT_EQ(store.take_changes().values.size(), size_t(kEntities));
  }
}

// A slot's change-list marks are stamped with a frame counter of 24 bits that wraps: a slot
// listed once, 2^24 - 1 or 2^24 frames ago (the counter's period whether or not it skips 0),
// must be listed again, not taken for listed already, in `values`, `slots` and `structural`.
TEST(EntityStore, ChangesAreListedAfterTheFrameCounterWraps) {
  EntityStore store;
  for (EntityId e : {1, 2, 3, 4, 5, 6, 7}) {
    store.create(e);
    store.set_translation(e, float3(1));
  }
  (void)store.take_changes();
  constexpr uint32_t kLastFrame = 1u << 24;  // frames counted from the first changes
  for (uint32_t frame = 0; frame < kLastFrame; ++frame) {
    if (frame == 0) {
      store.set_translation(1, float3(2));
      store.add(3, Component::Static);
      store.set_parent(5, 7);
    } else if (frame == 1) {
      store.set_translation(2, float3(2));
      store.add(4, Component::Static);
      store.set_parent(6, 7);
    }
    (void)store.take_changes();
  }
  store.set_translation(1, float3(3));
  store.set_translation(2, float3(3));
  store.remove(3, Component::Static);
  store.remove(4, Component::Static);
  store.remove(5, Component::Parent);
  store.remove(6, Component::Parent);
  const StoreChanges c = store.take_changes();
  EXPECT_EQ(sorted(c.values), sorted({store.slot_of(1), store.slot_of(2)}));
  EXPECT_EQ(sorted(c.slots), sorted({store.slot_of(3), store.slot_of(4), store.slot_of(5),
                                     store.slot_of(6)}));
  EXPECT_EQ(sorted(c.structural), sorted({store.slot_of(5), store.slot_of(6)}));
}

TEST(EntityStore, StaticIsBakedOnlyAfterTheFrameThatComputedIt) {
  EntityStore store;
  store.create(1);
  store.add(1, Component::Static);
  EXPECT_FALSE(store.static_baked_at(store.slot_of(1)));
  store.mark_statics_baked();
  EXPECT_TRUE(store.static_baked_at(store.slot_of(1)));
  store.remove(1, Component::Static);
  store.add(1, Component::Static);  // a new Static is computed once more
  EXPECT_FALSE(store.static_baked_at(store.slot_of(1)));
}

TEST(EntityStore, DestroyedSlotIsReusedClean) {
  EntityStore store;
  store.create(1);
  store.set_translation(1, float3(5));
  store.add(1, Component::Static);
  store.mark_statics_baked();
  const uint32_t slot = store.slot_of(1);
  store.destroy(1);
  store.create(9);
  EXPECT_EQ(store.slot_of(9), slot);
  EXPECT_EQ(store.mask_at(slot), 0u);
  EXPECT_FALSE(store.static_baked_at(slot));
  EXPECT_EQ(store.translation_at(slot), float3(0));
}

// A slot freed and taken again in one frame (a despawn and a spawn) is one change: listed once
// in each list, so that the level order does not link it twice.
TEST(EntityStore, ASlotReusedInTheFrameItWasFreedIsListedOnce) {
  EntityStore store;
  store.create(1);
  store.create(2);
  store.set_parent(2, 1);
  (void)store.take_changes();
  store.set_translation(2, float3(1));  // a value change, then more: listed as changed only
  const uint32_t slot = store.slot_of(2);
  store.destroy(2);
  store.create(7);
  store.set_parent(7, 1);
  store.set_translation(7, float3(3));
  ASSERT_EQ(store.slot_of(7), slot);
  const StoreChanges c = store.take_changes();
  EXPECT_EQ(std::count(c.structural.begin(), c.structural.end(), slot), 1);
  EXPECT_EQ(std::count(c.slots.begin(), c.slots.end(), slot), 1);
  EXPECT_EQ(std::count(c.values.begin(), c.values.end(), slot), 0);
  // And the next frame starts clean: a new value of the Translation it has is a value alone.
  store.set_translation(7, float3(2));
  const StoreChanges next = store.take_changes();
  EXPECT_EQ(next.values, std::vector<uint32_t>{slot});
  EXPECT_TRUE(next.slots.empty());
  EXPECT_TRUE(next.structural.empty());
}

TEST(EntityStore, ChildrenOfAMissingParentMoveWithMoveChildren) {
  EntityStore store;
  for (EntityId e : {2, 3, 4}) store.create(e);
  store.set_parent(2, 9);  // 9 and 8 do not exist
  store.set_parent(3, 9);
  store.move_children(9, 4);  // from a missing parent to a live one
  EXPECT_EQ(sorted(store.children(4)), (std::vector<EntityId>{2, 3}));
  store.move_children(4, 8);  // and on to a missing one
  EXPECT_TRUE(store.children(4).empty());
  EXPECT_EQ(store.parent(2), EntityId(8));
  store.create(9);  // nothing waits for 9 any more
  EXPECT_TRUE(store.children(9).empty());
  store.create(8);
  EXPECT_EQ(sorted(store.children(8)), (std::vector<EntityId>{2, 3}));
  store.destroy(8);  // they lose their Parent
  EXPECT_FALSE(store.parent(2).has_value());
  store.create(8);
  EXPECT_TRUE(store.children(8).empty());
}

TEST(EntityStore, SlotFormsActAsTheirIdForms) {
  EntityStore store;
  const uint32_t a = store.create_at_slot(10);
  const uint32_t b = store.create_at_slot(20);
  const uint32_t c = store.create_at_slot(30);
  EXPECT_EQ(a, store.slot_of(10));
  EXPECT_EQ(c, store.slot_of(30));
  EXPECT_EQ(store.create_at_slot(20), EntityStore::kNoSlot);  // a duplicate
  store.set_parent_at(c, 10, a);
  store.set_parent_at(b, 10, a);
  EXPECT_EQ(sorted(store.children(10)), (std::vector<EntityId>{20, 30}));
  store.take_changes();
  store.set_parent_at(c, 10, a);  // already so: no change
  EXPECT_FALSE(store.take_changes().hierarchy);
  store.move_children_at(a, c);
  // 30 was a child of 10 too: now it is its own parent, as move_children(10, 30) makes it.
  EXPECT_EQ(sorted(store.children(30)), (std::vector<EntityId>{20, 30}));
  EXPECT_EQ(store.parent(30), EntityId(30));
  EXPECT_EQ(store.children(10), std::vector<EntityId>{});
  store.destroy(30);
  EXPECT_FALSE(store.parent(20).has_value());
  EXPECT_EQ(store.create_at_slot(30), c);  // the freed slot is reused
}

// The child lists (held under a live parent's slot, or under a missing parent's id) against a
// model that knows only each live entity's Parent: after every random edit, children(e) of
// every live e is exactly the live entities whose Parent names e.
TEST(EntityStore, ChildListsMatchTheParentsThroughRandomEdits) {
  EntityStore store;
  std::map<EntityId, std::optional<EntityId>> model;  // live id -> Parent
  std::mt19937 rng(5);
  constexpr EntityId kIds = 40;
  const auto pick = [&] { return EntityId(rng() % kIds); };
  for (int step = 0; step < 20000; ++step) {
    const EntityId e = pick(), p = pick();
    const bool live = model.count(e) != 0, parent_live = model.count(p) != 0;
    switch (rng() % 7) {
      case 0:
        if (rng() % 2) {
          EXPECT_EQ(store.create(e), !live);
        } else {
          const uint32_t slot = store.create_at_slot(e);
          EXPECT_EQ(slot, live ? EntityStore::kNoSlot : store.slot_of(e));
        }
        if (!live) model[e] = std::nullopt;
        break;
      case 1:
        EXPECT_EQ(store.destroy(e), live);
        if (live) {
          model.erase(e);
          for (auto& [id, parent] : model)
            if (parent == e) parent.reset();
        }
        break;
      case 2:
      case 3:
        if (!live) break;
        if (parent_live && rng() % 2) {
          store.set_parent_at(store.slot_of(e), p, store.slot_of(p));
        } else {
          store.set_parent(e, p);  // p may be missing
        }
        model[e] = p;
        break;
      case 4:
        store.remove(e, Component::Parent);
        if (live) model[e].reset();
        break;
      case 5:
        if (e == p) break;
        if (live && parent_live && rng() % 2) {
          store.move_children_at(store.slot_of(e), store.slot_of(p));
        } else {
          store.move_children(e, p);  // either may be missing
        }
        for (auto& [id, parent] : model)
          if (parent == e) parent = p;
        break;
      case 6:
        if (rng() % 8 == 0) store.take_changes();
        break;
    }
    for (EntityId id = 0; id < kIds; ++id) {
      std::vector<EntityId> expected;
      if (model.count(id))
        for (const auto& [child, parent] : model)
          if (parent == id) expected.push_back(child);
      ASSERT_EQ(sorted(store.children(id)), expected) << "step " << step << ", entity " << id;
      ASSERT_EQ(store.parent(id), model.count(id) ? model[id] : std::nullopt)
          << "step " << step << ", entity " << id;
      // The parent's slot, as the level order reads it: the slot of the id, or none.
      if (const std::optional<EntityId> named = store.parent(id)) {
        ASSERT_EQ(store.parent_slot_at(store.slot_of(id)), store.slot_of(*named))
            << "step " << step << ", entity " << id;
      }
    }
  }
}

TEST(EntityStore, ManyCreatesAndDestroysKeepTheIdMapConsistent) {
  EntityStore store;
  for (EntityId e = 0; e < 20000; ++e) store.create(e * 2654435761u);
  for (EntityId e = 0; e < 20000; e += 2) store.destroy(e * 2654435761u);
  EXPECT_EQ(store.size(), 10000u);
  for (EntityId e = 0; e < 20000; ++e) EXPECT_EQ(store.contains(e * 2654435761u), e % 2 == 1);
}

}  // namespace
}  // namespace tprop
