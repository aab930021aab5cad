// The `tzrec` command line: subcommands named like TorchEasyRec's Python modules.
#pragma once

namespace tzrec::cli {

// Parses flags, runs the subcommand; returns the process exit code. User errors print one
// line ("error: ...") and return 1; usage errors return 2.
int run(int argc, char** argv);

}  // namespace tzrec::cli
