// Private to host/: volk under tprop's own symbol names, and the per-context device table
// loader. Include this before any other Vulkan header in host/*.cpp.
#pragma once

#include "volk_rename.h"
#include <volk.h>

#ifdef __cplusplus
extern "C" {
#endif
// volkLoadDeviceTable without the global vkGetDeviceProcAddr it would read.
void tprop_load_device_table(struct VolkDeviceTable* table, VkDevice device,
                             PFN_vkGetDeviceProcAddr get_device_proc_addr);
#ifdef __cplusplus
}
#endif
