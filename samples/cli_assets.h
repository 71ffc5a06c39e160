// Where the `tprop` command finds the files it bundles (the default scene).
#pragma once

#include <string>

namespace tprop::cli {

// The path of a bundled asset: beside an installed tprop (<prefix>/share/tprop/NAME, found from
// the executable's own location), else in the source tree's assets/ (a build tree).
std::string bundled_asset(const std::string& name);

}  // namespace tprop::cli
