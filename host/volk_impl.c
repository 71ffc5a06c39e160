// volk's implementation under tprop's private names (see host/CMakeLists.txt), plus a device
// table loader that takes the vkGetDeviceProcAddr to use, so that nothing global is read or
// written: each VulkanContext loads its own table.
#include "volk_rename.h"
#include <volk.c>

#include "vk_volk_table.h"

struct TpropDeviceLoader {
  VkDevice device;
  PFN_vkGetDeviceProcAddr get_device_proc_addr;
};

static PFN_vkVoidFunction tprop_load_device_fn(void* context, const char* name) {
  const struct TpropDeviceLoader* loader = (const struct TpropDeviceLoader*)context;
  return loader->get_device_proc_addr(loader->device, name);
}

void tprop_load_device_table(struct VolkDeviceTable* table, VkDevice device,
                             PFN_vkGetDeviceProcAddr get_device_proc_addr) {
  struct TpropDeviceLoader loader = {device, get_device_proc_addr};
  volkGenLoadDeviceTable(table, &loader, tprop_load_device_fn);
}
