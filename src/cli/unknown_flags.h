// Flags a subcommand does not know: an error with a "did you mean" suggestion, except the
// TorchEasyRec flags a subcommand accepts on purpose without acting on them (one warning each).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tzrec::cli {

// The option group that lists accepted-but-ignored flags in a subcommand's --help.
inline constexpr const char* kIgnoredFlagsGroup = "Accepted and ignored (TorchEasyRec flags without effect here)";

// Registers `name` (e.g. "--local_rank") on `cmd` as accepted and ignored; `why` is shown in --help
// and in the warning printed when it is given. It may take one value (--flag=x or --flag x).
void add_ignored_flag(CLI::App* cmd, const std::string& name, const std::string& why);

// --local_rank / --local-rank, which torch.distributed.launch appends to a worker's arguments: the
// engine reads the LOCAL_RANK environment variable instead.
void add_local_rank_flag(CLI::App* cmd);

// After parsing: throws UsageError for the first argument `cmd` left unparsed (an unknown flag,
// with the closest known flag when one is near, or an unexpected positional argument), and logs
// one warning per ignored flag that was given.
void check_flags(CLI::App* cmd);

// The candidate closest to `wanted` by edit distance ('-' and '_' alike), or "" when none is close
// enough to be a typo.
std::string closest_name(const std::vector<std::string>& candidates, const std::string& wanted);

// The known flag of `cmd` closest to `unknown` by edit distance, or "" when none is close.
std::string closest_flag(const CLI::App* cmd, const std::string& unknown);

}  // namespace tzrec::cli
