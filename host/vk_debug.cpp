#include "vk_debug.h"

#include <cstdio>

namespace tprop {

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* state = static_cast<ContextState*>(user);
  const char* kind = "info";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    state->validation_errors.fetch_add(1);
    kind = "error";
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    state->validation_warnings.fetch_add(1);
    kind = "warning";
  }
  if (state->print_validation)
    std::fprintf(stderr, "tprop: Vulkan validation %s: %s\n", kind,
                 data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;  // never abort the call that triggered it
}

}  // namespace

VkDebugUtilsMessengerCreateInfoEXT validation_messenger_info(ContextState& state) {
  VkDebugUtilsMessengerCreateInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_validation_message;
  info.pUserData = &state;
  return info;
}

void set_debug_name(const ContextState& state, VkObjectType type, uint64_t handle,
                    const char* name) {
  if (!state.debug_utils || !state.in.vkSetDebugUtilsObjectNameEXT || handle == 0) return;
  VkDebugUtilsObjectNameInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT;
  info.objectType = type;
  info.objectHandle = handle;
  info.pObjectName = name;
  state.in.vkSetDebugUtilsObjectNameEXT(state.device, &info);
}

void begin_label(const ContextState& state, VkCommandBuffer cmd, const char* name) {
  if (!state.debug_utils || !state.in.vkCmdBeginDebugUtilsLabelEXT) return;
  VkDebugUtilsLabelEXT label{};
  label.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT;
  label.pLabelName = name;
  state.in.vkCmdBeginDebugUtilsLabelEXT(cmd, &label);
}

void end_label(const ContextState& state, VkCommandBuffer cmd) {
  if (!state.debug_utils || !state.in.vkCmdEndDebugUtilsLabelEXT) return;
  state.in.vkCmdEndDebugUtilsLabelEXT(cmd);
}

}  // namespace tprop
