// Private to host/: VK_EXT_debug_utils support. Object names and command-buffer labels (so a
// RenderDoc capture shows tprop's buffers, pipelines and passes by name) when the instance has
// the extension, and the validation messenger that counts errors and warnings for the tests.
#pragma once

#include "vk_context_state.h"

namespace tprop {

// The messenger create info that counts into `state` (used for the instance's pNext too, so
// that instance creation and destruction are validated as well).
VkDebugUtilsMessengerCreateInfoEXT validation_messenger_info(ContextState& state);

// No-ops when debug utils are off.
void set_debug_name(const ContextState& state, VkObjectType type, uint64_t handle,
                    const char* name);
void begin_label(const ContextState& state, VkCommandBuffer cmd, const char* name);
void end_label(const ContextState& state, VkCommandBuffer cmd);

template <class Handle>
void set_debug_name(const ContextState& state, VkObjectType type, Handle handle, const char* name) {
  set_debug_name(state, type, reinterpret_cast<uint64_t>(handle), name);
}

}  // namespace tprop
