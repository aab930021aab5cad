// Typed errors for user mistakes. The CLI prints what() on one line and exits non-zero.
// Programmer errors use TORCH_CHECK (torch targets) or assert-like checks instead.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tzrec {

// Base of every user-facing error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad pipeline config: message starts with the field path (or file:line:column).
class ConfigError : public Error {
 public:
  using Error::Error;
};

// Bad input data: message names the file, line/row, column and feature.
class DataError : public Error {
 public:
  using Error::Error;
};

// Missing, incompatible or corrupt checkpoint / model_dir state.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

// Bad command-line usage.
class UsageError : public Error {
 public:
  using Error::Error;
};

// A feature of TorchEasyRec that this build does not implement yet.
class NotSupportedError : public Error {
 public:
  explicit NotSupportedError(const std::string& what)
      : Error("not supported yet: " + what) {}
};

// A distributed run failed: a collective timed out or a peer rank died / stalled. The message names
// the collective and, where known, the rank at fault.
class DistributedError : public Error {
 public:
  using Error::Error;
};

// I/O failure on a file we were asked to read or write.
class IoError : public Error {
 public:
  using Error::Error;
};

}  // namespace tzrec
