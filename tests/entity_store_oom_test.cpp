// An EntityStore edit that runs out of memory throws std::bad_alloc and leaves the store as it
// was or with the edit reported: whatever changed is in the next take_changes(), so the GPU
// path never keeps a stale value for an entity (in oom_tests: alloc_failure.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <new>
#include <set>
#include <vector>

#include "alloc_failure.h"
#include "entity_store.h"

namespace tprop {
namespace {

using alloc_failure::arm;
using alloc_failure::disarm;

constexpr uint32_t kEntities = 3000;

struct Snapshot {
  std::vector<float3> translation;
  std::vector<quat> rotation;
  std::vector<float> scale;
  std::vector<ComponentMask> mask;
  std::vector<EntityId> parent;
  explicit Snapshot(const EntityStore& s) {
    for (uint32_t slot = 0; slot < s.slot_capacity(); ++slot) {
      translation.push_back(s.translation_at(slot));
      rotation.push_back(s.rotation_at(slot));
      scale.push_back(s.scale_at(slot));
      mask.push_back(s.mask_at(slot));
      parent.push_back(s.parent_at(slot));
    }
  }
};

// A store of kEntities entities with translation, rotation and scale, every change taken and
// then a frame without changes, so that the change lists have no room left (take_changes()
// leaves them as much as the frame before used): the edits below must grow them.
EntityStore make_store() {
  EntityStore store;
  store.set_value_log_threshold(0);  // its log's growth among the allocations that fail
  for (EntityId id = 1; id <= kEntities; ++id) {
    store.create(id);
    store.set_translation(id, float3(float(id), 0, 0));
    store.set_rotation(id, quat(1, 0, 0, 0));
    store.set_scale(id, 1.0f);
    if (id > 1) store.set_parent(id, id / 2);
  }
  (void)store.take_changes();
  (void)store.take_changes();
  return store;
}

// Every slot whose values or components differ from `before` is listed by take_changes(), and
// the values it logged (if it did: not where `log_given_up`) are the records'.
::testing::AssertionResult changes_cover(EntityStore& store, const Snapshot& before,
                                         bool log_given_up = false) {
  const StoreChanges changes = store.take_changes();
  if (log_given_up && !changes.value_records.empty())
    return ::testing::AssertionFailure() << "a value log kept after its growth failed";
  if (!changes.value_records.empty() && changes.value_records.size() != changes.values.size())
    return ::testing::AssertionFailure() << changes.value_records.size() << " value records for "
                                         << changes.values.size() << " listed slots";
  for (size_t k = 0; k < changes.value_records.size(); ++k) {
    const ValueSnapshot& v = changes.value_records[k];
    const uint32_t slot = changes.values[k];
    if (v.translation != store.translation_at(slot) || v.rotation != store.rotation_at(slot) ||
        v.scale != store.scale_at(slot) || v.components() != store.mask_at(slot))
      return ::testing::AssertionFailure() << "slot " << slot << "'s logged values differ";
  }
  std::set<uint32_t> listed(changes.slots.begin(), changes.slots.end());
  listed.insert(changes.values.begin(), changes.values.end());
  for (uint32_t slot = 0; slot < before.mask.size(); ++slot) {
    const bool changed = store.translation_at(slot) != before.translation[slot] ||
                         store.rotation_at(slot) != before.rotation[slot] ||
                         store.scale_at(slot) != before.scale[slot] ||
                         store.mask_at(slot) != before.mask[slot] ||
                         store.parent_at(slot) != before.parent[slot];
    if (changed && !listed.count(slot))
      return ::testing::AssertionFailure() << "slot " << slot << " changed, not reported";
  }
  // And the links agree with the Parents: every attached entity is among its parent's children.
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot) {
    if (!store.alive_at(slot) || !store.has_at(slot, Component::Parent)) continue;
    if (store.slot_of(store.id_at(slot)) != slot)
      return ::testing::AssertionFailure() << "slot " << slot << "'s id maps elsewhere";
    const std::vector<EntityId> siblings = store.children(store.parent_at(slot));
    if (store.slot_of(store.parent_at(slot)) != EntityStore::kNoSlot &&
        std::find(siblings.begin(), siblings.end(), store.id_at(slot)) == siblings.end())
      return ::testing::AssertionFailure() << "slot " << slot << " missing from its parent's list";
  }
  return ::testing::AssertionSuccess();
}

// The children listed under ids that no entity has: once each such id is created, its children
// are exactly the entities whose Parent names it.
::testing::AssertionResult waiting_children_attach(EntityStore& store) {
  std::map<EntityId, std::multiset<EntityId>> named;
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot)
    if (store.alive_at(slot) && store.has_at(slot, Component::Parent) &&
        store.parent_slot_at(slot) == EntityStore::kNoSlot)
      named[store.parent_at(slot)].insert(store.id_at(slot));
  for (const auto& [parent, children] : named) {
    if (!store.create(parent))
      return ::testing::AssertionFailure() << "parent " << parent << " exists already";
    const std::vector<EntityId> listed = store.children(parent);
    if (std::multiset<EntityId>(listed.begin(), listed.end()) != children)
      return ::testing::AssertionFailure() << "parent " << parent << " has " << listed.size()
                                           << " children listed, " << children.size()
                                           << " naming it";
  }
  return ::testing::AssertionSuccess();
}

// One kind of edit applied to every entity in turn until an allocation fails (or, where it is
// the value log's, to the end: the store goes on without it).
template <class Edit>
void edit_until_failure(const char* what, Edit&& edit) {
  long total;
  {
    EntityStore store = make_store();
    arm(LONG_MAX, false);
    for (EntityId id = 1; id <= kEntities; ++id) edit(store, id);
    total = alloc_failure::count();
    disarm();
  }
  ASSERT_GT(total, 2) << what << ": the edits should grow the store's lists";
  for (long k = 0; k < total; ++k) {
    SCOPED_TRACE(testing::Message() << what << ", allocation " << k);
    EntityStore store = make_store();
    const Snapshot before(store);
    bool failed = false;
    arm(k, false);
    try {
      for (EntityId id = 1; id <= kEntities; ++id) edit(store, id);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
    disarm();
    // Or the allocation was the value log's, which the store gives up for the frame instead:
    // its consumers read the records then.
    ASSERT_TRUE(changes_cover(store, before, !failed));
    ASSERT_TRUE(waiting_children_attach(store));
  }
}

// A component added back after a value change of the same frame, its default written over the
// value an earlier remove() left: out of memory, the store is as it was, and the values it
// logged for the frame are still its records' (the default was once written before the slot
// was listed, and the log kept the old value).
TEST(EntityStoreOutOfMemory, AnAddThatFailsAfterAValueChangeKeepsTheLogTrue) {
  for (long k = 0; k < 8; ++k) {
    SCOPED_TRACE(testing::Message() << "allocation " << k);
    EntityStore store = make_store();  // logs at any size
    for (EntityId id = 1; id <= kEntities; ++id) {
      store.set_translation(id, float3(5.0f, float(id), 0));
      store.remove(id, Component::Translation);  // the record keeps the value
    }
    (void)store.take_changes();
    (void)store.take_changes();
    const Snapshot before(store);
    bool failed = false;
    arm(k, false);
    try {
      for (EntityId id = 1; id <= kEntities; ++id) {
        store.set_rotation(id, quat(0, 1, 0, 0));  // listed, logged
        store.add(id, Component::Translation);
      }
    } catch (const std::bad_alloc&) {
      failed = true;
    }
    disarm();
    ASSERT_TRUE(changes_cover(store, before, !failed));
  }
}

TEST(EntityStoreOutOfMemory, AValueEditThatFailsLeavesNothingUnreported) {
  edit_until_failure("set_translation", [](EntityStore& s, EntityId id) {
    s.set_translation(id, float3(0, float(id), 0));
  });
  edit_until_failure("set_rotation", [](EntityStore& s, EntityId id) {
    s.set_rotation(id, quat(0, 1, 0, 0));
  });
  edit_until_failure("set_trs_at", [](EntityStore& s, EntityId id) {
    s.set_trs_at(s.slot_of(id), float3(1, 2, 3), quat(0, 0, 1, 0), 2.0f);
  });
  edit_until_failure("add NonUniformScale", [](EntityStore& s, EntityId id) {
    s.add(id, Component::NonUniformScale);
  });
}

TEST(EntityStoreOutOfMemory, AStructuralEditThatFailsLeavesTheLinksWholeAndNothingUnreported) {
  edit_until_failure("set_parent", [](EntityStore& s, EntityId id) {
    if (id > 3) s.set_parent(id, id / 2 - 1);
  });
  edit_until_failure("remove Parent", [](EntityStore& s, EntityId id) {
    s.remove(id, Component::Parent);
  });
  edit_until_failure("destroy", [](EntityStore& s, EntityId id) { s.destroy(kEntities + 1 - id); });
}

// A Parent may name an id no entity has yet: the store lists such children under the id, in a
// map that grows as more ids are named.
TEST(EntityStoreOutOfMemory, AParentNamedAheadOfItsEntityThatFailsLeavesTheLinksWhole) {
  constexpr EntityId kMissing = 1u << 20;
  edit_until_failure("set_parent to missing ids", [](EntityStore& s, EntityId id) {
    s.set_parent(id, kMissing + id);
  });
  edit_until_failure("move_children to missing ids", [](EntityStore& s, EntityId id) {
    s.move_children(id, kMissing + id);
  });
  edit_until_failure("move_children between missing ids", [](EntityStore& s, EntityId id) {
    s.set_parent(id, kMissing + id);
    s.move_children(kMissing + id, kMissing + kEntities + id);
  });
}

}  // namespace
}  // namespace tprop
