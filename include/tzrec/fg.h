/*
 * tzrec/fg.h — feature generation at serving time, with the same code that trains.
 *
 * A FeatureGenerator is built from an export directory of `tzrec export` (its pipeline.config,
 * fg.json and the feature assets it packages) or from a pipeline config, and turns a batch of
 * request rows into the model's feature inputs exactly as training and `tzrec predict` do: the
 * config's fg_mode (FG_NORMAL / FG_DAG run feature generation on raw inputs; FG_NONE parses
 * already-encoded columns), its hashing (env USE_FARM_HASH_TO_BUCKETIZE when the generator is
 * built), vocabularies, boundaries, defaults, custom operators and sequence rules
 * (docs/serving_fg.md).
 *
 * Inputs are text cells, one per row and input: multi-values joined by the feature's
 * `separator` (default "\x1d"), sequences by its `sequence_delim`, maps as "k:v" lists — the
 * same text a CSV input of the config holds. An empty string is a missing value.
 *
 * Errors (a bad config, a missing input, a value that does not parse) are thrown as
 * std::runtime_error with one line naming the feature, the input and the request row.
 * A FeatureGenerator is immutable once built: generate() may be called from several threads.
 *
 * Link against the CMake target tzrec_serving (it brings the engine's static libraries and
 * libtorch).
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tzrec {

/* One input column of a request batch: `cells[r]` is row r's value ("" = missing). */
struct FgInput {
  std::string name;
  std::vector<std::string> cells;
};

/* One feature's output for a request batch of `rows` rows. */
struct FgFeatureOutput {
  std::string name;
  bool sparse = false;    /* ids into the feature's embedding table */
  bool sequence = false;  /* a sequence feature (its items per row in sequence_lengths) */
  /* Dense: floats per row (per item of a dense sequence). Sparse sequences: 1 = one id per item,
   * 0 = any number (ids per item in item_lengths). */
  int64_t value_dim = 0;
  /* Sparse: ids, and per row their count (lengths[r]; for a sequence with one id per item, the
   * items of row r); weights per id for weighted features (empty otherwise). */
  std::vector<int64_t> ids;
  std::vector<int64_t> lengths;
  std::vector<float> weights;
  /* Dense: rows * value_dim floats, row-major; dense sequences: (Σ items) * value_dim. */
  std::vector<float> values;
  /* Sequences: items per row; multi-value sparse items: ids per item. */
  std::vector<int64_t> sequence_lengths;
  std::vector<int64_t> item_lengths;
};

struct FgOutput {
  int64_t rows = 0;
  std::vector<FgFeatureOutput> features; /* in config order; stub_type features left out */
  /* The feature named `name`, or nullptr. */
  const FgFeatureOutput* find(const std::string& name) const;
};

class FeatureGenerator {
 public:
  /* `path`: an export directory (it holds pipeline.config) or a pipeline config file (.config or
   * .json). */
  explicit FeatureGenerator(const std::string& path);
  ~FeatureGenerator();
  FeatureGenerator(FeatureGenerator&&) noexcept;
  FeatureGenerator& operator=(FeatureGenerator&&) noexcept;

  /* The inputs generate() reads, each once, in config order. */
  const std::vector<std::string>& input_names() const;
  /* Runs feature generation on a batch: every input of input_names() must be given, each with
   * the same number of cells; inputs it does not read are ignored. */
  FgOutput generate(const std::vector<FgInput>& inputs) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tzrec
