// The run's seed: TORCH_MANUAL_SEED, read in one place (no torch). The training runtime seeds
// torch's generator with it (initialisation, dropout); the loader's negative and TDM samplers
// mix it into their per-batch streams. (expr features' rand() is keyed by the row alone, the same
// in training and serving.)
#pragma once

#include <cstdint>
#include <optional>

namespace tzrec {

// nullopt when TORCH_MANUAL_SEED is unset or empty; UsageError when it is not a non-negative
// integer.
std::optional<uint64_t> manual_seed();

}  // namespace tzrec
