#include "dcl_world_walk.h"

#include <algorithm>

namespace tprop {

DclParcel dcl_walk_position(const DclWalk& walk, uint32_t frame) {
  return {int32_t(int64_t(walk.start.x) + frame), walk.start.y};
}

std::optional<DclViewSpan> dcl_view_span(const DclWalk& walk, DclParcel base, uint32_t parcels,
                                         uint32_t frames) {
  // In 64 bits: parcels are any int32 and the player walks up to a million frames.
  const int64_t view = walk.view;
  const int64_t dy = int64_t(base.y) - walk.start.y;
  if (dy > view || -dy > view || parcels == 0 || frames == 0) return std::nullopt;
  // The player's x at frame f is start.x + f; the scene covers base.x .. base.x + parcels - 1.
  const int64_t first = int64_t(base.x) - view - walk.start.x;
  const int64_t last = int64_t(base.x) + parcels - 1 + view - walk.start.x;
  if (last < 0 || first >= int64_t(frames)) return std::nullopt;
  DclViewSpan span;
  span.first = uint32_t(std::max<int64_t>(first, 0));
  if (last + 1 < int64_t(frames)) span.end = uint32_t(last + 1);
  return span;
}

}  // namespace tprop
