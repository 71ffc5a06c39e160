// A world feed that runs out of memory: whichever allocation fails, the failure reaches the
// caller as the status of the chunk whose scene it hit (never an exception, but for the
// feed's own status vector, before anything is read), that scene's stream stops there for good,
// and every other scene of the feed holds exactly what its stream says. In oom_tests, whose
// operator new fails on demand (alloc_failure.h).
#include <gtest/gtest.h>

#include <climits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "alloc_failure.h"
#include "dcl_sync.h"
#include "dcl_test_support.h"
#include "dcl_scene.h"
#include "dcl_world.h"
#include "dcl_world_gen.h"

namespace tprop {
namespace {

using SceneId = DclWorld::SceneId;

using alloc_failure::arm;
using alloc_failure::disarm;

// Scene s holds exactly the entities `single` holds, with the same values.
::testing::AssertionResult holds_the_same(const DclWorld& w, SceneId s, const DclScene& single) {
  const EntityStore& store = w.store();
  const EntityStore& alone = single.store();
  size_t in_scene = 0;
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot)
    in_scene += store.alive_at(slot) && (store.id_at(slot) >> 16) == s;
  if (in_scene != alone.size() + 1)
    return ::testing::AssertionFailure() << "scene " << s << " has " << in_scene
                                         << " entities, its stream " << alone.size() << " + root";
  for (uint32_t slot = 0; slot < alone.slot_capacity(); ++slot) {
    if (!alone.alive_at(slot)) continue;
    const std::optional<EntityId> id = w.store_id(s, alone.id_at(slot));
    if (!id) return ::testing::AssertionFailure() << "entity " << alone.id_at(slot) << " lost";
    const uint32_t at = store.slot_of(*id);
    if (store.translation_at(at) != alone.translation_at(slot) ||
        store.rotation_at(at) != alone.rotation_at(slot))
      return ::testing::AssertionFailure() << "entity " << alone.id_at(slot) << "'s values";
  }
  return ::testing::AssertionSuccess();
}

struct Frames {
  DclWorldStreams streams;
  static Frames make() {
    // Three scenes of 200 entities: frame 0 creates them, frame 1 moves, re-parents, deletes,
    // creates and ties a cycle in each.
    Result<DclWorldStreams> s = generate_dcl_world("gen:dclworld:3:1", 3, 7);
    EXPECT_TRUE(s);
    return {std::move(*s)};
  }
  std::vector<DclWorld::Chunk> chunks(const std::vector<SceneId>& ids, uint32_t frame) const {
    std::vector<DclWorld::Chunk> out;
    for (size_t i = 0; i < ids.size(); ++i) out.push_back({ids[i], streams.scenes[i].chunk(frame)});
    return out;
  }
};

// Feeds frame `failing` with allocation k failing (alone, or with every later one), after the
// frames before it fed normally; then checks every scene and feeds the next frame normally.
void feed_with_failure(const Frames& frames, uint32_t failing, long k, bool after) {
  SCOPED_TRACE(testing::Message() << "frame " << failing << ", allocation " << k
                                  << (after ? " and later" : ""));
  DclWorld w;
  std::vector<SceneId> ids;
  std::vector<DclScene> singles(frames.streams.scenes.size());
  for (const DclWorldScene& sc : frames.streams.scenes)
    ids.push_back(w.add_scene(sc.name, sc.parcel).value());
  for (uint32_t f = 0; f < failing; ++f) {
    for (const Status& st : w.feed(frames.chunks(ids, f))) ASSERT_TRUE(st);
    for (size_t i = 0; i < ids.size(); ++i)
      ASSERT_TRUE(singles[i].feed(frames.streams.scenes[i].chunk(f)));
  }
  const size_t entities_before = w.store().size();

  const std::vector<DclWorld::Chunk> chunks = frames.chunks(ids, failing);
  std::optional<std::vector<Status>> statuses;
  arm(k, after);
  try {
    statuses = w.feed(chunks);
  } catch (const std::bad_alloc&) {
  }
  disarm();
  if (!statuses) {
    // Only the feed's own status vector may throw, before anything was read.
    ASSERT_EQ(k, 0) << "an exception escaped feed() after its first allocation";
    ASSERT_EQ(w.store().size(), entities_before);
    statuses = w.feed(chunks);  // the same bytes again, with memory
  }
  ASSERT_EQ(statuses->size(), chunks.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_TRUE(singles[i].feed(chunks[i].bytes));
    if ((*statuses)[i]) {
      EXPECT_TRUE(holds_the_same(w, ids[i], singles[i])) << "scene " << i;
    } else {
      // The scene's stream stops here, for good, and says so.
      EXPECT_FALSE((*statuses)[i].error().message.empty());
      EXPECT_FALSE(w.feed(ids[i], frames.streams.scenes[i].chunk(failing + 1)));
      EXPECT_FALSE(w.finish(ids[i]));
    }
  }
  // The scenes that took their frame whole go on; every scene can be removed, to the last entity.
  const std::vector<DclWorld::Chunk> next = frames.chunks(ids, failing + 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!(*statuses)[i]) continue;
    ASSERT_TRUE(w.feed(ids[i], next[i].bytes)) << "scene " << i;
    ASSERT_TRUE(singles[i].feed(next[i].bytes));
    EXPECT_TRUE(holds_the_same(w, ids[i], singles[i])) << "scene " << i << ", next frame";
  }
  for (SceneId id : ids) ASSERT_TRUE(w.remove_scene(id));
  EXPECT_EQ(w.store().size(), 0u);
}

// How many allocations `op` makes: the ones a test then fails in turn.
template <class Op>
long allocations_in(Op&& op) {
  arm(LONG_MAX, false);
  op();
  const long n = alloc_failure::count();
  disarm();
  return n;
}

// How many allocations feeding frame `f` makes (after the frames before it).
long allocations_of_frame(const Frames& frames, uint32_t f) {
  DclWorld w;
  std::vector<SceneId> ids;
  for (const DclWorldScene& sc : frames.streams.scenes)
    ids.push_back(w.add_scene(sc.name, sc.parcel).value());
  for (uint32_t g = 0; g < f; ++g) (void)w.feed(frames.chunks(ids, g));
  return allocations_in([&] { (void)w.feed(frames.chunks(ids, f)); });
}

TEST(DclWorldOutOfMemory, AFailedAllocationAnywhereInAFeedStopsItsSceneAloneAndLosesNothingElse) {
  const Frames frames = Frames::make();
  for (uint32_t f : {0u, 1u}) {
    const long total = allocations_of_frame(frames, f);
    ASSERT_GT(total, 3) << "frame " << f;
    for (long k = 0; k < total; ++k) {
      feed_with_failure(frames, f, k, false);
      feed_with_failure(frames, f, k, true);
      if (HasFatalFailure()) return;
    }
  }
}

// A world that has fed frames 0 and 1 of every scene, with single-scene twins of each.
struct LoadedWorld {
  DclWorld w;
  std::vector<SceneId> ids;
  std::vector<DclScene> singles;
  explicit LoadedWorld(const Frames& frames) : singles(frames.streams.scenes.size()) {
    for (const DclWorldScene& sc : frames.streams.scenes)
      ids.push_back(w.add_scene(sc.name, sc.parcel).value());
    for (uint32_t f : {0u, 1u}) {
      for (const Status& st : w.feed(frames.chunks(ids, f))) EXPECT_TRUE(st);
      for (size_t i = 0; i < ids.size(); ++i)
        EXPECT_TRUE(singles[i].feed(frames.streams.scenes[i].chunk(f)));
    }
  }
};

// Loading and unloading scenes out of memory: an error, and the world as it was (the scene not
// added; the scene to remove loaded and whole), never half of either; the same call succeeds
// once memory is back.
TEST(DclWorldOutOfMemory, AddingOrRemovingASceneOutOfMemoryLeavesTheWorldAsItWas) {
  const Frames frames = Frames::make();
  const auto allocations = [&](auto&& op) {
    LoadedWorld lw(frames);
    return allocations_in([&] { (void)op(lw); });
  };
  const auto remove_one = [](LoadedWorld& lw) { return lw.w.remove_scene(lw.ids[1]); };
  const long removal = allocations(remove_one);
  ASSERT_GT(removal, 0);
  for (long k = 0; k < removal; ++k) {
    SCOPED_TRACE(testing::Message() << "removal, allocation " << k);
    LoadedWorld lw(frames);
    const size_t before = lw.w.store().size();
    arm(k, true);
    const Status st = remove_one(lw);
    disarm();
    ASSERT_FALSE(st) << "the removal made no allocation it could fail at";
    EXPECT_NE(st.error().message.find("out of memory"), std::string::npos) << st.error().message;
    EXPECT_EQ(lw.w.store().size(), before);
    ASSERT_TRUE(lw.w.has_scene(lw.ids[1]));
    for (size_t i = 0; i < lw.ids.size(); ++i)
      EXPECT_TRUE(holds_the_same(lw.w, lw.ids[i], lw.singles[i])) << "scene " << i;
    ASSERT_TRUE(remove_one(lw));
    EXPECT_EQ(lw.w.store().size(), before - lw.singles[1].store().size() - 1);
  }
  // A new scene: in a new slot, and in the slot of a scene removed before.
  for (const bool reuse : {false, true}) {
    const auto add_one = [&](LoadedWorld& lw) {
      if (reuse && lw.w.has_scene(lw.ids[2])) {
        EXPECT_TRUE(lw.w.remove_scene(lw.ids[2]));
      }
      return lw.w.add_scene("late", {4, -2});
    };
    const long adding = allocations(add_one);
    ASSERT_GT(adding, 0);
    for (long k = 0; k < adding; ++k) {
      SCOPED_TRACE(testing::Message() << (reuse ? "reused slot" : "new slot") << ", allocation " << k);
      LoadedWorld lw(frames);
      if (reuse) {
        ASSERT_TRUE(lw.w.remove_scene(lw.ids[2]));
      }
      const size_t entities = lw.w.store().size(), scenes = lw.w.scene_count();
      arm(k, true);
      Result<SceneId> added = add_one(lw);
      disarm();
      if (added) continue;  // the failed allocation was the remove's, before the add
      // Named, unless every allocation fails, the message's own included.
      EXPECT_TRUE(added.error().message.find("'late'") != std::string::npos ||
                  added.error().message == "out of memory")
          << added.error().message;
      EXPECT_EQ(lw.w.store().size(), entities);
      EXPECT_EQ(lw.w.scene_count(), scenes);
      added = lw.w.add_scene("late", {4, -2});
      ASSERT_TRUE(added);
      const std::optional<EntityId> root = lw.w.store_id(*added, kDclRootEntity);
      ASSERT_TRUE(root);
      EXPECT_EQ(lw.w.store().translation_at(lw.w.store().slot_of(*root)),
                dcl_parcel_position({4, -2}));
    }
  }
}

// An application may hang its own store entities below a scene's: removing the scene then
// hands them to the root, and makes room for them too before it destroys anything.
TEST(DclWorldOutOfMemory, RemovingASceneWithOutsideChildrenOutOfMemoryLeavesItWhole) {
  const auto world_with_outside_children = [](DclWorld& w) {
    const SceneId s = w.add_scene("a", {1, 1}).value();
    EXPECT_TRUE(w.apply(s, dcl_test::put_transform(512, 1, dcl_test::at(float3(1, 0, 0), 0))));
    EXPECT_TRUE(w.apply(s, dcl_test::put_transform(513, 1, dcl_test::at(float3(2, 0, 0), 0))));
    const EntityId parent = *w.store_id(s, 513);
    for (EntityId i = 0; i < 1000; ++i) {
      EXPECT_TRUE(w.store().create(0xF0000000u + i));
      EXPECT_TRUE(w.store().set_parent(0xF0000000u + i, parent));
    }
    (void)w.store().take_changes();
    (void)w.store().take_changes();  // the change lists keep no room
    return s;
  };
  DclWorld counted;
  const SceneId counted_scene = world_with_outside_children(counted);
  const long total =
      allocations_in([&] { ASSERT_TRUE(counted.remove_scene(counted_scene)); });
  ASSERT_GT(total, 0);
  for (long k = 0; k < total; ++k) {
    SCOPED_TRACE(testing::Message() << "allocation " << k);
    DclWorld w;
    const SceneId s = world_with_outside_children(w);
    const size_t before = w.store().size();
    arm(k, true);
    const Status st = w.remove_scene(s);
    disarm();
    ASSERT_FALSE(st) << "the removal made no allocation it could fail at";
    EXPECT_EQ(w.store().size(), before);
    ASSERT_TRUE(w.store_id(s, 512));
    EXPECT_TRUE(w.store().contains(*w.store_id(s, 512)));
    EXPECT_EQ(w.store().children(*w.store_id(s, 513)).size(), 1000u);
    ASSERT_TRUE(w.remove_scene(s));
    EXPECT_EQ(w.store().size(), 1000u);
    EXPECT_FALSE(w.store().parent(0xF0000000u));  // handed to the root
  }
}

// The messages of a stream's bytes, in order.
std::vector<CrdtMessage> messages_of(std::span<const uint8_t> bytes) {
  std::vector<CrdtMessage> out;
  CrdtStreamReader reader;
  EXPECT_TRUE(feed_crdt_bytes(reader, bytes, [&](const CrdtMessage& m) { out.push_back(m); }));
  return out;
}

// The direct path, one message at a time: the message that runs out of memory comes back as an
// error, never an exception; its scene refuses everything after it, and the other scenes go on.
TEST(DclWorldOutOfMemory, ADirectApplyOutOfMemoryReturnsAnErrorAndStopsItsSceneAlone) {
  const Frames frames = Frames::make();
  const std::vector<CrdtMessage> messages = messages_of(frames.streams.scenes[0].chunk(1));
  ASSERT_GT(messages.size(), 2u);
  const auto world_after_frame_0 = [&](DclWorld& w, std::vector<SceneId>& ids) {
    for (const DclWorldScene& sc : frames.streams.scenes)
      ids.push_back(w.add_scene(sc.name, sc.parcel).value());
    for (const Status& st : w.feed(frames.chunks(ids, 0))) ASSERT_TRUE(st);
  };
  DclWorld counted;
  std::vector<SceneId> counted_ids;
  world_after_frame_0(counted, counted_ids);
  const long total = allocations_in([&] {
    for (const CrdtMessage& m : messages) ASSERT_TRUE(counted.apply(counted_ids[0], m));
  });
  ASSERT_GT(total, 0);
  for (long k = 0; k < total; ++k) {
    SCOPED_TRACE(testing::Message() << "allocation " << k);
    DclWorld w;
    std::vector<SceneId> ids;
    world_after_frame_0(w, ids);
    size_t failed_at = messages.size();
    arm(k, false);
    for (size_t i = 0; i < messages.size() && failed_at == messages.size(); ++i) {
      if (!w.apply(ids[0], messages[i])) failed_at = i;
    }
    disarm();
    ASSERT_LT(failed_at, messages.size()) << "no message reported the failed allocation";
    const Result<CrdtApplyResult> again = w.apply(ids[0], messages.back());
    ASSERT_FALSE(again);
    EXPECT_NE(again.error().message.find("scene '"), std::string::npos) << again.error().message;
    EXPECT_FALSE(w.feed(ids[0], frames.streams.scenes[0].chunk(2)));
    EXPECT_FALSE(w.finish(ids[0]));
    for (size_t i = 1; i < ids.size(); ++i) {
      DclScene single;
      ASSERT_TRUE(single.feed(frames.streams.scenes[i].chunk(0)));
      ASSERT_TRUE(single.feed(frames.streams.scenes[i].chunk(1)));
      ASSERT_TRUE(w.feed(ids[i], frames.streams.scenes[i].chunk(1)));
      EXPECT_TRUE(holds_the_same(w, ids[i], single)) << "scene " << i;
    }
    for (SceneId id : ids) ASSERT_TRUE(w.remove_scene(id));
    EXPECT_EQ(w.store().size(), 0u);
  }
}

}  // namespace
}  // namespace tprop
