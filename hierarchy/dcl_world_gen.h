// A Decentraland world as streams to replay frame by frame: the gen:dclworld generator, and a
// folder of .crdt streams with a manifest (world.json).
//
// Frames: a scene's stream is cut into chunks, one a frame, at the byte offsets `frame_starts`
// (frame 0 starts at byte 0; an offset need not fall between messages: a message cut in two is
// applied in the frame that completes it). A scene is added before world frame `load_frame` is
// ingested, feeds its chunk k in world frame load_frame + k, and is removed before world frame
// `unload_frame`, if it has one.
//
// world.json, in the folder beside the streams (relative stream paths are from the folder):
//   {"scenes": [{"name": "plaza", "parcel": [-9, 73], "stream": "plaza.crdt",
//                "frames": [1200, 1880], "load": 0, "unload": 5}]}
// name, parcel and stream are required; frames (the offsets of frames 1, 2, ...; increasing,
// within the stream), load and unload (frame numbers, unload > load) are optional. Without
// "frames" the whole stream is one frame.
//
// gen:dclworld:SCENES[:PARCELS][:walk=VIEW][:edits=KINDS] (PARCELS from 1 to 325, default 5):
// SCENES scenes of PARCELS parcels each, placed side by side through Genesis City from parcel
// (-150, -150), 300 parcels a row, each with PARCELS * 200 entities (the SDK's limit for its
// size, numbered from 512). Frame 0 creates them all: a forest up to 4 levels below the scene
// root, positions within the scene's parcels, yaw rotations, a non-uniform scale on every 8th.
// Every later frame moves 1% of the live entities (a new Transform; one move in ten also
// re-parents to an entity of a lower number or the root), deletes 0.1% (DELETE_ENTITY; their
// children then stand at the scene root) and creates as many (half of them reuse a deleted
// number at the next version), and every 4th frame ties two entities into a parenting cycle
// that the next frame undoes (edits=all, the default). edits=spawn leaves out the re-parents
// and the cycles (every move keeps its entity's parent): issue 10's frame, 1% of the Transforms
// changed and 0.1% of the entities deleted and created; edits=move leaves out the deletions and
// creations too. The kinds' costs can then be told apart (a world frame's host time is mostly
// its structural edits).
// With walk=VIEW (0 to 300 parcels) a player walks east from parcel (-150, -150) one parcel a
// frame (dcl_world_walk.h): a scene loads in the frame it comes within VIEW parcels of the
// player and unloads in the frame it falls out of view, its stream starting anew from its
// creation at its load (its frames count from there); scenes never in view are left out.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dcl_world.h"
#include "result.h"

namespace tprop {

struct DclWorldScene {
  std::string name;
  DclParcel parcel;
  std::vector<uint8_t> stream;
  std::vector<uint64_t> frame_starts;  // where frames 1, 2, ... begin, increasing
  uint32_t load_frame = 0;
  std::optional<uint32_t> unload_frame;

  uint32_t chunk_count() const { return uint32_t(frame_starts.size()) + 1; }
  // The bytes the scene feeds in its own frame k (k = world frame - load_frame); empty past
  // its last chunk.
  std::span<const uint8_t> chunk(uint32_t k) const;
};

struct DclWorldStreams {
  std::string source;  // the spec or folder, for reports
  std::vector<DclWorldScene> scenes;
  // The world frames the streams fill: the last scene chunk's world frame + 1.
  uint32_t frame_count() const;
};

inline constexpr uint32_t kDclWorldDefaultParcels = 5;
inline constexpr uint32_t kDclWorldEntitiesPerParcel = 200;
inline constexpr const char* kDclWorldSpecForm =
    "gen:dclworld:SCENES[:PARCELS][:walk=VIEW][:edits=all|spawn|move]";

// Which edits a generated world's frames after the first make (see above).
enum class DclWorldEdits : uint8_t {
  All,     // moves (one in ten re-parenting), deletions and creations, cycles
  Spawns,  // moves that keep their parents, deletions and creations
  Moves,   // moves that keep their parents
};

bool is_dcl_world_spec(std::string_view spec);
// Generates `frames` frames (at least 1) of the world the spec names; the same spec, frames and
// seed give the same bytes on every platform.
Result<DclWorldStreams> generate_dcl_world(std::string_view spec, uint32_t frames, uint64_t seed);

// Whether `path` is a directory holding a world.json.
bool is_dcl_world_folder(const std::string& path);
// Reads the manifest and every stream it names. Errors name the file and the field.
Result<DclWorldStreams> read_dcl_world(const std::string& folder);
// Writes world.json and one NAME.crdt a scene into `folder` (which must exist); names must be
// distinct and usable as file names.
Status write_dcl_world(const std::string& folder, const DclWorldStreams& world);

}  // namespace tprop
