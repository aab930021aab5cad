// The run's seed: TORCH_MANUAL_SEED, read in one place (no torch). The training runtime seeds
// torch's generator with it; the loader's samplers (negative and TDM sampling) and expr
// features' rand() mix it into their per-row streams, so one variable fixes every random draw.
#pragma once

#include <cstdint>
#include <optional>

namespace tzrec {

// nullopt when TORCH_MANUAL_SEED is unset or empty; UsageError when it is not a non-negative
// integer.
std::optional<uint64_t> manual_seed();

}  // namespace tzrec
