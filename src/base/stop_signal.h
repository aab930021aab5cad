// Graceful stop on SIGTERM / SIGINT (no torch). Once install_stop_handlers() ran, the first such
// signal only sets a flag: training notices it after its current step (or while a stream waits
// for data), saves a checkpoint and exits normally, so a scheduler's SIGTERM loses no work and a
// stream loses no message. A second signal ends the process at once (the default action).
#pragma once

namespace tzrec {

void install_stop_handlers();
bool stop_requested();
// The signal's name ("SIGTERM"), for the log line; "" when none arrived.
const char* stop_signal_name();

}  // namespace tzrec
