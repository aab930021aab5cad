// Drawing the values of one cell of a column (column_spec.h) and their contribution to the
// hidden label model.
//
// A cell is held in the form it is written: ints (INT64 scalars and lists), floats (FLOAT
// scalars and lists) or strings (STRING scalars and lists; one string for the text layouts and
// sequences). The contribution is the mean, over the cell's tokens, of a fixed pseudo-random
// vector per (column, token) — ids, vocabulary entries, words and map keys are tokens — or, for
// numbers, the standardized value times a fixed vector of the column.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "datagen/column_spec.h"
#include "datagen/random.h"

namespace tzrec::datagen {

// Dimensions of the hidden representation of a cell.
inline constexpr int kHiddenDim = 4;
using Contribution = std::array<double, kHiddenDim>;

struct Cell {
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  void clear() {
    ints.clear();
    floats.clear();
    strings.clear();
  }
};

// Zipf-like rank in [0, n) for a uniform u in (0, 1): p(k) ∝ (k + 1)^-1.1 (continuous
// approximation; works for any n up to 2^63).
int64_t zipf_rank(int64_t n, double u);

class ValueGenerator {
 public:
  // `seed` keys the token vectors; `spec` must outlive the generator.
  ValueGenerator(const ColumnSpec& spec, uint64_t seed);

  // Draws one cell. `count`: values of a list / joined / weighted / map cell, or elements of a
  // sequence (ignored for scalars). Adds the cell's contribution to *contribution.
  void generate(Rng& rng, int count, Cell* cell, Contribution* contribution) const;

  // The text of a scalar or list cell (values joined by `list_sep`), for sampler tables.
  static std::string cell_text(const Cell& cell, const std::string& list_sep);

  const ColumnSpec& spec() const { return *spec_; }

 private:
  struct Token {
    int64_t i = 0;
    double f = 0.0;
    std::string s;
  };
  // One value of `domain`; adds its token vector (or scaled number vector) to acc.
  void draw_value(const Domain& domain, Rng& rng, Token* out, Contribution* acc, int* tokens) const;
  std::string value_text(const Domain& domain, const Token& t) const;
  void add_token_vector(uint64_t token_hash, Contribution* acc) const;

  const ColumnSpec* spec_;
  uint64_t key_;                 // hash of (seed, column name)
  Contribution number_vector_{}; // weights of standardized numbers
};

}  // namespace tzrec::datagen
