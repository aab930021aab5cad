// Comma-separated command-line lists ("a, b,,c" → {"a", "b", "c"}).
#pragma once

#include <string>
#include <vector>

namespace tzrec {

// The items of `text` split at ',', each without leading / trailing spaces and tabs; empty items
// are dropped.
std::vector<std::string> split_comma_list(const std::string& text);

}  // namespace tzrec
