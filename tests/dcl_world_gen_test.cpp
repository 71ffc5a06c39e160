// gen:dclworld's edit kinds: each frame after the first makes exactly the edits its kind names,
// read back from the bytes it wrote (a Transform's parent, deletions, new entities), so that a
// benchmark of `edits=spawn` measures issue 10's frame and nothing more.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "dcl_crdt.h"
#include "dcl_transform.h"
#include "dcl_world_gen.h"

namespace tprop {
namespace {

// What the frames after the first did, summed over every scene of a generated world.
struct EditCounts {
  size_t moves = 0;       // Transforms put again for a live entity, its parent unchanged
  size_t reparents = 0;   // Transforms put again for a live entity naming another parent
  size_t creations = 0;   // first Transforms of an entity id (a new number, or a new version)
  size_t deletions = 0;   // DELETE_ENTITY
  size_t other = 0;       // any other message
};

EditCounts count_edits(const DclWorldStreams& world) {
  EditCounts n;
  for (const DclWorldScene& sc : world.scenes) {
    std::map<EntityId, EntityId> parent_of;  // by full id, while live
    for (uint32_t k = 0; k < sc.chunk_count(); ++k) {
      Result<std::vector<CrdtMessage>> messages = decode_crdt_messages(sc.chunk(k));
      EXPECT_TRUE(messages) << sc.name << " frame " << k;
      if (!messages) return n;
      for (const CrdtMessage& m : *messages) {
        if (m.type == CrdtMessageType::DeleteEntity) {
          parent_of.erase(m.entity);
          if (k > 0) ++n.deletions;
          continue;
        }
        const std::optional<DclTransform> t =
            m.type == CrdtMessageType::PutComponent && m.component == kDclTransformComponentId
                ? decode_dcl_transform(m.data)
                : std::nullopt;
        if (!t) {
          n.other += k > 0;
          continue;
        }
        const auto it = parent_of.find(m.entity);
        if (k > 0) {
          if (it == parent_of.end()) {
            ++n.creations;
          } else if (it->second == t->parent) {
            ++n.moves;
          } else {
            ++n.reparents;
          }
        }
        parent_of[m.entity] = t->parent;
      }
    }
  }
  return n;
}

constexpr uint32_t kFrames = 9;  // frames 1 and 5 tie cycles in edits=all

TEST(DclWorldGen, EditKindsMakeExactlyTheEditsTheyName) {
  Result<DclWorldStreams> all = generate_dcl_world("gen:dclworld:12:2", kFrames, 7);
  Result<DclWorldStreams> named_all = generate_dcl_world("gen:dclworld:12:2:edits=all", kFrames, 7);
  Result<DclWorldStreams> spawn = generate_dcl_world("gen:dclworld:12:2:edits=spawn", kFrames, 7);
  Result<DclWorldStreams> move = generate_dcl_world("gen:dclworld:12:2:edits=move", kFrames, 7);
  for (const Result<DclWorldStreams>* r : {&all, &named_all, &spawn, &move})
    ASSERT_TRUE(*r) << r->error().message;

  // 400 entities a scene: 4 moves, 1 deletion and 1 creation a frame, 8 frames, 12 scenes.
  const EditCounts a = count_edits(*all);
  EXPECT_GT(a.reparents, 0u);  // one move in ten re-parents, and the cycles' links
  EXPECT_EQ(a.deletions, 12u * 8u);
  EXPECT_EQ(a.creations, 12u * 8u);
  EXPECT_EQ(a.other, 0u);
  for (size_t i = 0; i < all->scenes.size(); ++i)
    EXPECT_EQ(all->scenes[i].stream, named_all->scenes[i].stream) << "edits=all is the default";

  const EditCounts s = count_edits(*spawn);
  EXPECT_EQ(s.reparents, 0u);
  EXPECT_EQ(s.moves, 12u * 8u * 4u);
  EXPECT_EQ(s.deletions, 12u * 8u);
  EXPECT_EQ(s.creations, 12u * 8u);
  EXPECT_EQ(s.other, 0u);

  const EditCounts m = count_edits(*move);
  EXPECT_EQ(m.reparents, 0u);
  EXPECT_EQ(m.moves, 12u * 8u * 4u);
  EXPECT_EQ(m.deletions, 0u);
  EXPECT_EQ(m.creations, 0u);
  EXPECT_EQ(m.other, 0u);

  // The first frame, which creates the scenes, is the same whatever the kind.
  for (size_t i = 0; i < all->scenes.size(); ++i) {
    const auto first = [&](const DclWorldStreams& w) {
      const std::span<const uint8_t> c = w.scenes[i].chunk(0);
      return std::vector<uint8_t>(c.begin(), c.end());
    };
    EXPECT_EQ(first(*spawn), first(*all));
    EXPECT_EQ(first(*move), first(*all));
  }
}

// A world saved with --save-world replays from its folder, and generated worlds are compared
// across builds: the default kind writes the bytes it wrote before edit kinds existed. The
// figures are those of `tprop run gen:dclworld:4:2 --frames 6 --save-world DIR` of build
// e786cfe (seed 1): every scene's stream, FNV-1a 64 over the four in order, and its frames.
TEST(DclWorldGen, DefaultEditsWriteTheBytesOfBuildsBeforeEditKinds) {
  Result<DclWorldStreams> w = generate_dcl_world("gen:dclworld:4:2", 6, 1);
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_EQ(w->scenes.size(), 4u);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const DclWorldScene& sc : w->scenes) {
    EXPECT_EQ(sc.stream.size(), 29368u);
    EXPECT_EQ(sc.frame_starts, (std::vector<uint64_t>{27200, 27688, 28176, 28528, 28880}));
    for (const uint8_t b : sc.stream) hash = (hash ^ b) * 0x100000001b3ull;
  }
  EXPECT_EQ(hash, 0x27add0234d4c75c4ull);
}

TEST(DclWorldGen, BadEditKindsNameWhatIsWrong) {
  for (const char* spec :
       {"gen:dclworld:2:edits=x", "gen:dclworld:2:edits=", "gen:dclworld:2:edits",
        "gen:dclworld:2:edits=move:edits=all", "gen:dclworld:2:3:walk=1:edits=move:4",
        "gen:dclworld:2:edits=move:3"}) {
    Result<DclWorldStreams> r = generate_dcl_world(spec, 2, 1);
    ASSERT_FALSE(r) << spec;
    EXPECT_NE(r.error().message.find(spec), std::string::npos) << r.error().message;
  }
  Result<DclWorldStreams> r = generate_dcl_world("gen:dclworld:2:edits=moves", 2, 1);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("all, spawn, move"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace tprop
