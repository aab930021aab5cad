#include "base/stop_signal.h"

#include <csignal>

namespace tzrec {
namespace {

volatile std::sig_atomic_t received = 0;

void on_stop_signal(int sig) {
  received = sig;
  // The next one takes the default action (terminate).
  std::signal(sig, SIG_DFL);
}

}  // namespace

void install_stop_handlers() {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
}

bool stop_requested() { return received != 0; }

const char* stop_signal_name() {
  switch (received) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "";
  }
}

}  // namespace tzrec
