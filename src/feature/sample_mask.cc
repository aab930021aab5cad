#include "feature/sample_mask.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "base/stable_hash.h"
#include "data/row_key.h"
#include "parquet/column_slice.h"

namespace tzrec::feature {
namespace {

double checked_prob(float p, const char* field) {
  if (!(p >= 0.0f && p <= 1.0f)) {
    throw ConfigError(fmt::format("data_config.{}: {} is not a probability; use a value in [0, 1]", field, p));
  }
  return p;
}

// A copy of typed column `c` with the rows where `mask` is 1 empty: null scalars, empty lists.
parquet::ColumnData masked_typed(const parquet::ColumnData& c, const std::vector<uint8_t>& mask) {
  const int64_t rows = c.num_rows;
  if (c.lists.empty()) {
    parquet::ColumnData out = c;
    if (out.validity.empty()) out.validity.assign(static_cast<size_t>(rows), 1);
    for (int64_t r = 0; r < rows; ++r) {
      if (!mask[static_cast<size_t>(r)]) continue;
      out.validity[static_cast<size_t>(r)] = 0;
      if (!out.defs.empty()) out.defs[static_cast<size_t>(r)] = 0;  // null at the top level
    }
    return out;
  }
  if (!c.lists[0].defs.empty()) {
    throw NotSupportedError(fmt::format(
        "use_mask on Parquet column '{}': a list nested in further optional groups (write it as a plain list column)",
        c.name()));
  }
  parquet::ColumnData out = parquet::empty_column(c.descriptor);
  for (int64_t r = 0; r < rows;) {
    if (mask[static_cast<size_t>(r)]) {  // an empty, present list
      parquet::ListLevel& top = out.lists[0];
      top.offsets.push_back(top.offsets.back());
      if (!top.validity.empty() || !c.lists[0].validity.empty()) {
        top.validity.resize(static_cast<size_t>(out.num_rows), 1);
        top.validity.push_back(1);
      }
      ++out.num_rows;
      ++r;
      continue;
    }
    int64_t e = r + 1;
    while (e < rows && !mask[static_cast<size_t>(e)]) ++e;
    parquet::append_rows(c, r, e, &out);
    r = e;
  }
  return out;
}

data::StringColumn masked_text(const data::StringColumn& c, const std::vector<uint8_t>& mask) {
  data::StringColumn out;
  out.name = c.name;
  out.bytes.reserve(c.bytes.size());
  out.offsets.reserve(c.offsets.size());
  for (int64_t r = 0; r < c.size(); ++r) out.append(mask[static_cast<size_t>(r)] ? std::string_view() : c.cell(r));
  return out;
}

}  // namespace

SampleMaskOptions sample_mask_options(const protos::DataConfig& dc) {
  SampleMaskOptions o;
  o.sample_prob = checked_prob(dc.sample_mask_prob(), "sample_mask_prob");
  o.negative_prob = checked_prob(dc.negative_sample_mask_prob(), "negative_sample_mask_prob");
  return o;
}

SampleMasks draw_sample_masks(const SampleMaskOptions& options, const data::RecordBatch& batch, int64_t num_negatives,
                              uint64_t seed, int rank) {
  const uint64_t first = batch.num_rows() > 0 ? data::row_key(batch, 0) : 0;
  SplitMix64 rng(chain_seed(seed, {fnv1a64("sample_mask"), static_cast<uint64_t>(rank), first}));
  SampleMasks m;
  m.rows.resize(static_cast<size_t>(batch.num_rows()));
  for (auto& x : m.rows) x = unit_from_bits(rng.next()) < options.sample_prob ? 1 : 0;
  m.negatives.resize(static_cast<size_t>(num_negatives));
  for (auto& x : m.negatives) x = unit_from_bits(rng.next()) < options.negative_prob ? 1 : 0;
  return m;
}

std::string first_maskable_column(const data::RecordBatch& batch, const std::vector<std::string>& columns) {
  for (const std::string& name : columns) {
    if (batch.column_index(name) >= 0) return name;
    const data::TypedColumn* t = batch.typed_column(name);
    if (t != nullptr && !t->is_map()) return name;
  }
  return "";
}

data::RecordBatch with_masked_column(const data::RecordBatch& batch, const std::vector<std::string>& columns,
                                     const std::string& masked, const std::vector<uint8_t>& mask) {
  if (static_cast<int64_t>(mask.size()) != batch.num_rows()) {
    throw UsageError(fmt::format("with_masked_column: {} masks for {} rows", mask.size(), batch.num_rows()));
  }
  data::RecordBatch out;
  out.files = batch.files;
  out.origins = batch.origins;
  out.origin_unit = batch.origin_unit;
  std::vector<std::string> done;
  for (const std::string& name : columns) {
    if (std::find(done.begin(), done.end(), name) != done.end()) continue;
    done.push_back(name);
    if (const int i = batch.column_index(name); i >= 0) {
      const data::StringColumn& c = batch.columns[static_cast<size_t>(i)];
      out.columns.push_back(name == masked ? masked_text(c, mask) : c);
    } else if (const data::TypedColumn* t = batch.typed_column(name); t != nullptr) {
      if (name != masked) {
        out.typed_columns.push_back(*t);
        continue;
      }
      if (t->is_map()) throw UsageError("with_masked_column: '" + name + "' is a map column");
      data::TypedColumn m;
      m.name = name;
      m.values = masked_typed(t->values, mask);
      out.typed_columns.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace tzrec::feature
