// MatchOptions: the settings every match model message shares and its towers read (output_dim,
// similarity, temperature, in_batch_negative), from match_model.h's MatchModel.
#pragma once

#include <cstdint>

namespace tzrec::models {

struct MatchOptions {
  int64_t output_dim = 0;  // 0: the towers end with their MLP
  bool cosine = false;     // similarity COSINE: tower outputs L2-normalised
  double temperature = 1.0;
  bool in_batch_negative = false;
};

}  // namespace tzrec::models
