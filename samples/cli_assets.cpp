#include "cli_assets.h"

#include <filesystem>
#include <system_error>

#if !defined(TPROP_ASSETS_DIR) || !defined(TPROP_INSTALLED_ASSETS_FROM_BIN)
#error "TPROP_ASSETS_DIR (the source tree's assets/) and TPROP_INSTALLED_ASSETS_FROM_BIN (the \
installed data folder relative to the installed executable's folder) must be defined by the build"
#endif

namespace tprop::cli {

// The installed location is found from /proc/self/exe rather than from the install prefix
// known at configure time, so that `cmake --install --prefix`, DESTDIR staging and a moved
// install tree all keep working. A build tree has no share/tprop beside it and falls back to
// the source tree it was configured from.
std::string bundled_asset(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed =
        (exe.parent_path() / TPROP_INSTALLED_ASSETS_FROM_BIN / name).lexically_normal();
    if (fs::is_regular_file(installed, ec)) return installed.string();
  }
  return (fs::path(TPROP_ASSETS_DIR) / name).string();
}

}  // namespace tprop::cli
