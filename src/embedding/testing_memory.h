// The process's resident memory, for the tests of demand-paged tables (header-only, tests only).
#pragma once

#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace tzrec::embedding::testing {

// VmRSS of /proc/self/status in MiB (a test failure when it is missing).
inline double resident_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // "VmRSS:  123 kB"
  }
  ADD_FAILURE() << "no VmRSS in /proc/self/status";
  return 0;
}

}  // namespace tzrec::embedding::testing
