// A player walking through Genesis City, for gen:dclworld's walk=VIEW option: which world
// frames each scene spends within view, so that a replay loads scenes as they come into view
// and unloads them once they fall behind, mid-run, as an explorer does.
//
// The player starts on parcel `start` and walks east (+x) one parcel (16 m) a frame: far faster
// than a person walks, so that a short replay sees many scenes come and go. A scene is in view
// while any of its parcels lies within `view` parcels of the player's parcel along both x and y
// (a square of 2 * view + 1 parcels a side around the player: the load radius of an explorer,
// in parcels). A scene of gen:dclworld is a strip of parcels along x, so on a straight walk
// each scene is in view during one run of consecutive frames: it loads once and unloads once.
#pragma once

#include <cstdint>
#include <optional>

#include "dcl_world.h"

namespace tprop {

struct DclWalk {
  DclParcel start;
  uint32_t view = 0;  // in parcels
};

// Frames [first, end) of the replay; no `end` when the scene is still in view at its last
// frame (it is never unloaded).
struct DclViewSpan {
  uint32_t first = 0;
  std::optional<uint32_t> end;
  friend bool operator==(const DclViewSpan&, const DclViewSpan&) = default;
};

// The player's parcel in world frame `frame`.
DclParcel dcl_walk_position(const DclWalk& walk, uint32_t frame);

// The frames among 0 .. frames - 1 during which the scene whose `parcels` parcels run east from
// `base` is in view; empty when it never is.
std::optional<DclViewSpan> dcl_view_span(const DclWalk& walk, DclParcel base, uint32_t parcels,
                                         uint32_t frames);

}  // namespace tprop
