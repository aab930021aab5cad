// The files features read (Feature::assets(): vocab files, ...) travel with what a config
// produces, as TorchEasyRec's _copy_assets (tzrec/features/feature.py) does
// (docs/tzrec-compatibility.md §5.3): each file is copied once into the target directory as
// "<stem>_<md5 of its bytes><extension>" (Python's os.path.splitext of the base name), and the
// config (or fg.json entry) names the copy.
#pragma once

#include <string>

#include "tzrec/protos/pipeline.pb.h"

namespace tzrec::feature {

// The copy's name for the file at `path` (IoError naming the file when it cannot be read).
std::string asset_file_name(const std::string& path);

// Copies `path` into `dir` under asset_file_name(path) unless a file of that name is there
// already; returns the name. IoError naming the files when the copy fails.
std::string copy_asset(const std::string& path, const std::string& dir);

// Copies the assets of `config`'s features into `dir` and points the config at the copies: each
// asset field becomes the copy's name, and asset_dir becomes `asset_dir` (cleared when empty:
// names relative to where the config is read from). The features are built and checked first
// (ConfigError / NotSupportedError as training).
void relocate_assets(protos::EasyRecConfig* config, const std::string& dir, const std::string& asset_dir);

// Sets asset_dir to `dir` in every feature message of `config` that has asset_dir set: an export
// package's config read from wherever the package now is (its assets are in the package).
void rebase_asset_dirs(protos::EasyRecConfig* config, const std::string& dir);

}  // namespace tzrec::feature
