// The per-element distance of the SID losses (TorchEasyRec SidReconLoss.recon_type,
// SidCommitmentLoss.commitment_type, docs/tzrec-compatibility.md §7.1): "l2" (squared error),
// "l1" (absolute error) or "cos" (1 − cosine similarity over the last dimension).
#pragma once

#include <string>

namespace tzrec::loss {

enum class SidDistance { kL2, kL1, kCos };

// `value` ("l2", "l1", "cos") → the distance; anything else throws tzrec::ConfigError naming `path`.
SidDistance parse_sid_distance(const std::string& value, const std::string& path);

}  // namespace tzrec::loss
