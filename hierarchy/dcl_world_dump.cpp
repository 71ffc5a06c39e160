#include "dcl_world_dump.h"

#include <cassert>
#include <cerrno>
#include <cstring>
#include <exception>

#include "dump.h"

namespace tprop {

Status write_world_dump(std::FILE* out, const std::string& name, const DclWorld& world,
                        std::span<const DclWorld::SceneId> scenes, uint32_t frames,
                        const DepthOrder& order, const std::vector<float4x4>& local_to_world) {
  assert(local_to_world.size() == order.size());
  try {
    std::string text = "{\"frames\": " + std::to_string(frames) + ", \"scenes\": [";
    for (size_t i = 0; i < scenes.size(); ++i) {
      const DclWorld::SceneId s = scenes[i];
      const DclParcel parcel = world.parcel(s);
      text += i == 0 ? "\n {\"name\": " : ",\n {\"name\": ";
      append_json_string(text, world.name(s));
      text += ", \"slot\": " + std::to_string(s) + ", \"parcel\": [" + std::to_string(parcel.x) +
              ", " + std::to_string(parcel.y) + "], \"entities\": [";
      // The root first (id 0), then the state's live entities in id order; number 0 at another
      // version is shadowed by the root, and a shadowed entity has no store slot.
      std::vector<EntityId> ids = world.state(s).entities();
      std::erase_if(ids, [](EntityId e) { return dcl_entity_number(e) == 0; });
      ids.insert(ids.begin(), kDclRootEntity);
      bool first = true;
      for (EntityId e : ids) {
        const std::optional<uint32_t> slot = world.store_slot(s, e);
        if (!slot || *slot >= order.position.size() ||
            order.position[*slot] == DepthOrder::kNone)
          continue;
        text += first ? "\n  {\"id\": " : ",\n  {\"id\": ";
        first = false;
        text += std::to_string(e);
        text += ", \"localToWorld\": ";
        append_dump_matrix(text, local_to_world[order.position[*slot]]);
        text += '}';
        // One write a few kilobytes: stdio's per-call locking would dominate one per entry.
        if (text.size() >= (1u << 16)) {
          std::fwrite(text.data(), 1, text.size(), out);
          text.clear();
        }
      }
      text += first ? "]}" : "\n ]}";
    }
    text += scenes.empty() ? "]}\n" : "\n]}\n";
    std::fwrite(text.data(), 1, text.size(), out);
  } catch (const std::exception& e) {  // std::bad_alloc
    return Error{"cannot write the dump " + name + ": " + e.what()};
  }
  if (std::fflush(out) != 0 || std::ferror(out))
    return Error{"cannot write the dump " + name + ": " + std::strerror(errno)};
  return ok_status();
}

Status write_world_dump(const std::string& path, const DclWorld& world,
                        std::span<const DclWorld::SceneId> scenes, uint32_t frames,
                        const DepthOrder& order, const std::vector<float4x4>& local_to_world) {
  return write_dump_file(path, [&](std::FILE* f) {
    return write_world_dump(f, path, world, scenes, frames, order, local_to_world);
  });
}

}  // namespace tprop
