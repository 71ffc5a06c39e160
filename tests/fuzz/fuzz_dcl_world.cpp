// libFuzzer harness: a Decentraland world (hierarchy/dcl_world.h) against the single-scene path.
// The input's CRDT messages (as many as decode, then the undecodable rest) are dealt to a few
// scenes and fed frame by frame, several scenes' chunks in one DclWorld::feed (so that a batch
// holds several scenes' messages, applied after the next scene's are read), scenes unloaded and
// loaded again on the way. After every frame each loaded scene must hold what a DclScene fed the
// same bytes holds, below the scene's root at its parcel: the same entities and values under
// the same parents (see compare_scene), and the same status for every chunk.
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compare.h"
#include "dcl_crdt.h"
#include "dcl_scene.h"
#include "dcl_world.h"
#include "depth_order.h"
#include "fuzz_support.h"
#include "reference.h"

namespace {

using tprop::DclWorld;
using tprop::EntityId;
using tprop::fuzz::check;

constexpr size_t kScenes = 3;
constexpr uint32_t kFrames = 6;

// Pseudo-random choices seeded by the input (splitmix64), so one input replays the same way.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : state_(0xcbf29ce484222325ull ^ size) {
    for (size_t i = 0; i < size; ++i) state_ = (state_ ^ data[i]) * 0x100000001b3ull;
  }
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n ? size_t(next() % n) : 0; }

 private:
  uint64_t state_;
};

// One scene as the harness drives it: its stream, what of it was fed, and its single-scene twin.
struct SceneRun {
  std::vector<uint8_t> stream;
  size_t fed = 0;
  std::optional<DclWorld::SceneId> id;
  std::unique_ptr<tprop::DclScene> single;
};

// Scene s of the world holds exactly the single scene's entities and its root, each with the
// same components (a Parent aside) of the same bits, and under the same parent as the single
// scene's depth sort attaches it to (after its cycles and unknown parents; the world resolves
// those itself, at the scene root). The LocalToWorlds then follow: both are the reference's
// products of the same matrices, the world's with the parcel's translation at the root. (Not
// compared as matrices: a stream's extreme values make the two products' rounding differ
// beyond any fixed tolerance, which is not what this harness looks for.)
void compare_scene(const DclWorld& world, const tprop::DepthOrder& world_order,
                   DclWorld::SceneId s, const tprop::DclScene& single) {
  // A second live version of a held number is kept out of the world's store (dcl_world.h):
  // that scene's entities legitimately differ from the single scene's.
  if (world.shadowed(s) != 0) return;
  const tprop::EntityStore& store = world.store();
  const tprop::EntityStore& alone = single.store();
  size_t in_scene = 0;
  for (uint32_t slot = 0; slot < store.slot_capacity(); ++slot)
    in_scene += store.alive_at(slot) && (store.id_at(slot) >> 16) == s;
  check(in_scene == alone.size() + 1, "a scene holds other entities than its stream's");
  const uint32_t root_slot = store.slot_of(DclWorld::root_id(s));
  check(store.translation_at(root_slot) == tprop::dcl_parcel_position(world.parcel(s)),
        "a scene root is not at its parcel");

  const tprop::DepthOrder order = tprop::sort_by_depth(alone);
  const tprop::ComponentMask parent_bit = tprop::bit(tprop::Component::Parent);
  const auto same_bits = [](const auto& a, const auto& b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
  };
  for (uint32_t slot = 0; slot < alone.slot_capacity(); ++slot) {
    if (!alone.alive_at(slot)) continue;
    const EntityId e = alone.id_at(slot);
    const std::optional<EntityId> id = world.store_id(s, e);
    check(id.has_value(), "a live entity of the stream is missing from its scene");
    const uint32_t at = store.slot_of(*id);
    check((store.mask_at(at) & ~parent_bit) == (alone.mask_at(slot) & ~parent_bit),
          "an entity's components differ from the single scene's");
    check(same_bits(store.translation_at(at), alone.translation_at(slot)) &&
              same_bits(store.rotation_at(at), alone.rotation_at(slot)) &&
              same_bits(store.scale_at(at), alone.scale_at(slot)) &&
              same_bits(store.non_uniform_scale_at(at), alone.non_uniform_scale_at(slot)),
          "an entity's values differ from the single scene's");
    const uint32_t pos = order.position[slot];
    std::optional<EntityId> want = DclWorld::root_id(s);
    if (order.attached(pos)) want = world.store_id(s, alone.id_at(order.slot[order.parent[pos]]));
    check(want.has_value(), "an entity's parent in the single scene is missing from the world");
    const uint32_t world_pos = world_order.position[at];
    check(world_order.attached(world_pos), "a scene entity stands at the world's root");
    check(store.id_at(world_order.slot[world_order.parent[world_pos]]) == *want,
          "an entity hangs under another parent than in the single scene");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  Choices choices(data, size);

  // Deal the input's messages to the scenes, whole, by a choice per message; the bytes past the
  // last message that decodes go to one scene, whose stream then fails there.
  std::vector<SceneRun> runs(kScenes);
  tprop::CrdtStreamReader reader;
  reader.append(input);
  for (;;) {
    auto next = reader.next();
    if (!next || !*next) break;
    tprop::append_crdt_message(**next, runs[choices.below(kScenes)].stream);
  }
  std::vector<uint8_t>& broken = runs[choices.below(kScenes)].stream;
  broken.insert(broken.end(), input.begin() + ptrdiff_t(reader.offset()), input.end());

  DclWorld world;
  for (uint32_t frame = 0; frame < kFrames; ++frame) {
    // Now and then a scene leaves, and comes back later from its stream's start.
    for (size_t i = 0; i < kScenes; ++i) {
      SceneRun& run = runs[i];
      if (run.id && choices.below(8) == 0) {
        check(bool(world.remove_scene(*run.id)), "a scene is removed (memory is plentiful here)");
        run.id.reset();
        run.single.reset();
      } else if (!run.id && (frame == 0 || choices.below(3) == 0)) {
        const auto id = world.add_scene("s" + std::to_string(i),
                                        {int32_t(choices.below(300)) - 150,
                                         int32_t(choices.below(300)) - 150});
        check(id.ok(), "adding a scene failed");
        run.id = *id;
        run.single = std::make_unique<tprop::DclScene>();
        run.fed = 0;
      }
    }
    // Each loaded scene's chunk of this frame (the last frame feeds what is left), in one feed.
    std::vector<DclWorld::Chunk> chunks;
    std::vector<size_t> chunk_run;
    for (size_t i = 0; i < kScenes; ++i) {
      SceneRun& run = runs[i];
      if (!run.id) continue;
      const size_t left = run.stream.size() - run.fed;
      const size_t take = frame + 1 == kFrames ? left : std::min(left, choices.below(left + 1));
      // Now and then the scene's bytes come as two chunks of the same feed.
      const size_t first = choices.below(4) == 0 ? choices.below(take + 1) : take;
      const auto feed_part = [&](size_t part) {
        chunks.push_back({*run.id, std::span<const uint8_t>(run.stream).subspan(run.fed, part)});
        chunk_run.push_back(i);
        run.fed += part;
      };
      feed_part(first);
      if (first < take) feed_part(take - first);
    }
    const std::vector<tprop::Status> statuses = world.feed(chunks);
    check(statuses.size() == chunks.size(), "a status per chunk");
    for (size_t c = 0; c < chunks.size(); ++c) {
      const tprop::Status alone = runs[chunk_run[c]].single->feed(chunks[c].bytes);
      check(statuses[c].ok() == alone.ok(), "the world and the single scene disagree on a chunk");
      if (!alone.ok())
        check(statuses[c].error().message.find(alone.error().message) != std::string::npos,
              "the world's error is not the single scene's");
    }

    tprop::DepthOrder order;
    // Run through the reference as well, for the sanitizers.
    const std::vector<tprop::float4x4> world_l2w = tprop::evaluate_once(world.store(), &order);
    check(world_l2w.size() == world.store().size(), "the reference skipped entities");
    check(order.cycles_broken == 0 && order.unknown_parents == 0,
          "the world left a cycle or an unknown parent to the depth sort");
    size_t expected = 0;
    for (const SceneRun& run : runs) {
      if (!run.id) continue;
      expected += run.single->store().size() + 1;
      compare_scene(world, order, *run.id, *run.single);
    }
    bool any_shadowed = false;
    for (const SceneRun& run : runs) any_shadowed |= run.id && world.shadowed(*run.id) != 0;
    if (!any_shadowed) check(world.store().size() == expected, "the world holds other entities");
  }
  return 0;
}
