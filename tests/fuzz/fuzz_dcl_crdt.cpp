// libFuzzer harness: the Decentraland CRDT stream reader (hierarchy/dcl_crdt.h) fed in random
// chunks, against the whole-buffer decoder: however the bytes arrive, the reader must hand out
// the same messages and fail at the same offset with the same message. The scene loader then
// applies the whole stream.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "dcl_crdt.h"
#include "dcl_scene.h"
#include "fuzz_support.h"

namespace {

// The chunk sizes: pseudo-random, seeded by the input, so that the whole input is the stream
// (assets/plaza.crdt is a seed as it is) and one input always replays the same way.
class ChunkSizes {
 public:
  ChunkSizes(const uint8_t* data, size_t size) : state_(0xcbf29ce484222325ull ^ size) {
    for (size_t i = 0; i < size; ++i) state_ = (state_ ^ data[i]) * 0x100000001b3ull;
  }
  size_t next() {
    state_ += 0x9e3779b97f4a7c15ull;  // splitmix64
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    // Mostly small pieces (a header split anywhere), sometimes a big one.
    return z % 8 == 0 ? 1 + (z >> 8) % 4096 : 1 + (z >> 8) % 24;
  }

 private:
  uint64_t state_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> stream(data, size);
  ChunkSizes chunk_sizes(data, size);

  tprop::CrdtStreamReader reader;
  std::vector<tprop::CrdtMessage> chunked;
  std::optional<tprop::Error> chunked_error;
  size_t at = 0;
  while (!chunked_error) {
    const size_t take = std::min(chunk_sizes.next(), stream.size() - at);
    reader.append(stream.subspan(at, take));
    at += take;
    while (true) {
      auto next = reader.next();
      if (!next) {
        chunked_error = next.error();
        break;
      }
      if (!*next) break;
      chunked.push_back(**next);
    }
    if (at == stream.size()) break;
  }
  if (!chunked_error) {
    if (tprop::Status end = reader.finish(); !end) chunked_error = end.error();
  }

  auto whole = tprop::decode_crdt_messages(stream);
  tprop::fuzz::check(whole.ok() == !chunked_error, "one reading failed, the other did not");
  tprop::fuzz::check(!whole.ok() || *whole == chunked, "chunked reading gave other messages");
  tprop::fuzz::check(whole.ok() || whole.error().message == chunked_error->message,
                     "chunked reading failed with another message");

  tprop::Result<tprop::Scene> scene = tprop::load_crdt_scene_from_bytes(stream, "fuzz.crdt");
  tprop::fuzz::evaluate_scene(scene);
  return 0;
}
