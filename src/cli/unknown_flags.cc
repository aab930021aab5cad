#include "cli/unknown_flags.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"

namespace tzrec::cli {
namespace {

// Levenshtein distance, with '-' and '_' treated as the same character (torchrun spells flags
// both ways).
size_t edit_distance(const std::string& a, const std::string& b) {
  auto same = [](char x, char y) { return x == y || ((x == '-' || x == '_') && (y == '-' || y == '_')); };
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "--name" of an argument "--name=value".
std::string flag_name(const std::string& arg) { return arg.substr(0, arg.find('=')); }

}  // namespace

void add_ignored_flag(CLI::App* cmd, const std::string& name, const std::string& why) {
  cmd->add_option(name, why)->expected(0, 1)->group(kIgnoredFlagsGroup);
}

void add_local_rank_flag(CLI::App* cmd) {
  add_ignored_flag(cmd, "--local_rank,--local-rank", "the local rank is read from the LOCAL_RANK environment variable");
}

std::string closest_name(const std::vector<std::string>& candidates, const std::string& wanted) {
  std::string best;
  size_t best_distance = std::string::npos;
  for (const std::string& candidate : candidates) {
    const size_t d = edit_distance(wanted, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  // Close enough to be a typo: at most a third of the letters differ.
  if (best.empty() || best_distance * 3 > std::max<size_t>(wanted.size(), 3)) return "";
  return best;
}

std::string closest_flag(const CLI::App* cmd, const std::string& unknown) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : cmd->get_options()) {
    for (const std::string& long_name : option->get_lnames()) flags.push_back("--" + long_name);
  }
  return closest_name(flags, flag_name(unknown));
}

void check_flags(CLI::App* cmd) {
  std::vector<std::string> rest;
  for (const std::string& arg : cmd->remaining()) {
    if (arg != "--") rest.push_back(arg);  // CLI11 keeps the separator before positional arguments
  }
  if (!rest.empty()) {
    const std::string& arg = rest.front();
    if (arg.rfind("-", 0) != 0) {
      throw UsageError(fmt::format("tzrec {}: unexpected argument '{}' (flags take the form --name value; "
                                   "see tzrec {} --help)",
                                   cmd->get_name(), arg, cmd->get_name()));
    }
    const std::string suggestion = closest_flag(cmd, arg);
    throw UsageError(fmt::format("tzrec {}: unknown flag {}{} (see tzrec {} --help)", cmd->get_name(),
                                 flag_name(arg), suggestion.empty() ? "" : "; did you mean " + suggestion + "?",
                                 cmd->get_name()));
  }
  for (const CLI::Option* option : cmd->get_options()) {
    if (option->get_group() == kIgnoredFlagsGroup && option->count() > 0) {
      log::warning("tzrec {}: ignoring {}: {}", cmd->get_name(), option->get_name(), option->get_description());
    }
  }
}

}  // namespace tzrec::cli
