// Whether a tool's input and output paths would write where it reads, or two outputs write to the
// same place (TorchEasyRec's path_util.check_path_conflict for local paths), no torch.
//
// Each path is one group: a comma list of files, directories and glob patterns. A group stands
// for the directories it touches: a pattern matching nothing its own resolved path (an output
// directory still to be written), a matched directory itself, a matched file its directory (and,
// for a symbolic link, the directory of its target). Paths are resolved as realpath(3) resolves
// them (symbolic links and "..", the missing part kept as written).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tzrec::data {

// The first conflict between two groups of `paths`, as a message naming both and the directory
// they share ("path conflict: 'a' and 'b' resolve to the same local directory '/x/y'."), or
// nullopt.
std::optional<std::string> find_path_conflict(const std::vector<std::string>& paths);

}  // namespace tzrec::data
