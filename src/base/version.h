#pragma once

namespace tzrec {

// Written to model_dir/version and checkpoint manifests.
inline constexpr const char* kVersion = "0.1.0";

}  // namespace tzrec
