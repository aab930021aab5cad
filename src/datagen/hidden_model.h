// The hidden model that labels follow: a random linear model over the cells' contributions
// (value_generator.h), one per label column (one per class for class labels), seeded by the
// seed, with the scores standardized on calibration rows:
//   binary: label ~ Bernoulli(sigmoid(kSignal * z + bias)), bias calibrated to ~30% positives
//   class:  label = argmax_k(kSignal * z_k + Gumbel noise)
//   float:  label = z + N(0, 0.3^2) noise
// where z is the standardized score. Deterministic in (seed, row).
#pragma once

#include <cstdint>
#include <vector>

#include "datagen/column_plan.h"
#include "datagen/random.h"
#include "datagen/value_generator.h"

namespace tzrec::datagen {

class HiddenModel {
 public:
  // Weights for every label column of `plan` over its input columns.
  HiddenModel(const ColumnPlan& plan, uint64_t seed);

  // Standardizes scores and calibrates biases on `samples`: per row, the contributions of every
  // column of the plan (zeros for non-input columns).
  void calibrate(const std::vector<std::vector<Contribution>>& samples);

  // The label value of column `column` (a label column) for one row's contributions; class
  // labels and binary labels as ids, float labels as values. `rng` supplies the noise.
  double label(int column, const std::vector<Contribution>& contributions, Rng& rng) const;

 private:
  struct Score {
    std::vector<std::vector<double>> weights;  // [input column][dim]
    double mean = 0.0;
    double scale = 1.0;
  };
  double raw(const Score& s, const std::vector<Contribution>& c) const;

  const ColumnPlan* plan_;
  // Per plan column: its scores (one for binary / float labels, num_class for class labels).
  std::vector<std::vector<Score>> scores_;
  std::vector<double> bias_;
};

}  // namespace tzrec::datagen
