#include "retrieval/sid_quality_job.h"

#include <optional>

#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "data/path_conflict.h"
#include "data/table_sources.h"
#include "data/typed_output_table.h"
#include "retrieval/sid_codes.h"

namespace tzrec::retrieval {
namespace {

using parquet::PhysicalType;

// One field's rows of a batch, checked against the codebook: valid[r] when well formed and in
// range; the counts of the two kinds of invalid rows.
struct CheckedCodes {
  SidCodeRows rows;
  std::vector<uint8_t> valid;
  int64_t malformed = 0;
  int64_t out_of_range = 0;
};

CheckedCodes check_codes(const data::RecordBatch& batch, const std::string& field, const std::vector<int64_t>& codebook) {
  CheckedCodes c;
  c.rows = decode_sid_codes(batch, field, static_cast<int64_t>(codebook.size()));
  c.valid = c.rows.valid;
  for (int64_t r = 0; r < c.rows.rows(); ++r) {
    if (!c.rows.valid[static_cast<size_t>(r)]) {
      ++c.malformed;
    } else if (first_code_out_of_range(c.rows.row(r), codebook) >= 0) {
      c.valid[static_cast<size_t>(r)] = 0;
      ++c.out_of_range;
    }
  }
  return c;
}

// Why row r of `c` is invalid, for the "error" policy's message.
std::string why_invalid(const CheckedCodes& c, int64_t r, const std::string& field, const std::vector<int64_t>& codebook) {
  return fmt::format("field '{}': {}", field, sid_row_problem(c.rows, r, codebook));
}

std::string joined(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

void log_view(const SidQualityView& v) {
  const SidQualityMetrics& m = v.result.metrics;
  log::info("===== SID quality stats ({}) =====", v.view);
  log::info("total = {}", m.total);
  log::info("unique_sid = {}", m.unique_sid);
  log::info("no_collision_rate = {}", m.no_collision_rate);
  log::info("uniquely_identified_item_rate = {}", m.uniquely_identified_item_rate);
  log::info("max_collision = {}", m.max_collision);
  log::info("gini = {}", m.gini);
  log::info("entropy = {}", m.entropy);
  log::info("max_entropy = {}", m.max_entropy);
  log::info("entropy_ratio = {}", m.entropy_ratio);
  for (const SidLayerQualityMetrics& l : v.result.layer_metrics) {
    log::info("layer {}: coverage={:.4f} dead_codes={} perplexity={:.4f}", l.layer, l.coverage, l.dead_codes,
              l.perplexity);
  }
  if (v.result.top_sids) {
    std::string top;
    for (const auto& [sid, count] : *v.result.top_sids) top += fmt::format("{}('{}', {})", top.empty() ? "" : ", ", sid, count);
    log::info("top SIDs by frequency ({}) = [{}]", v.view, top);
  }
}

// The columns every row of both tables starts with.
std::vector<data::TypedOutputColumn> common_columns() {
  std::vector<data::TypedOutputColumn> c;
  for (const char* name : {"source", "view", "sid_field", "codebook"}) c.push_back({name, PhysicalType::kByteArray});
  for (const char* name : {"input_rows", "evaluated_items", "invalid_pair_rows"}) c.push_back({name, PhysicalType::kInt64});
  return c;
}

void append_common(data::TypedOutputTable& t, const SidQualityOptions& o, const SidQualityEvaluation& e, const SidQualityView& v) {
  t[0].append_string(o.input_path);
  t[1].append_string(v.view);
  t[2].append_string(v.sid_field);
  t[3].append_string(joined(o.codebook));
  t[4].append<int64_t>(e.input_rows);
  t[5].append<int64_t>(e.evaluated_items);
  t[6].append<int64_t>(e.invalid_rows);
}

void write_summary(const SidQualityOptions& o, const SidQualityEvaluation& e, const std::string& writer_type) {
  std::vector<data::TypedOutputColumn> columns = common_columns();
  for (const char* name : {"total", "unique_sid"}) columns.push_back({name, PhysicalType::kInt64});
  for (const char* name : {"no_collision_rate", "uniquely_identified_item_rate"}) columns.push_back({name, PhysicalType::kDouble});
  columns.push_back({"max_collision", PhysicalType::kInt64});
  for (const char* name : {"gini", "entropy", "max_entropy", "entropy_ratio"}) columns.push_back({name, PhysicalType::kDouble});
  data::TypedOutputTable t(writer_type, o.summary_output, columns);
  for (const SidQualityView& v : e.views) {
    append_common(t, o, e, v);
    const SidQualityMetrics& m = v.result.metrics;
    t[7].append<int64_t>(m.total);
    t[8].append<int64_t>(m.unique_sid);
    t[9].append<double>(m.no_collision_rate);
    t[10].append<double>(m.uniquely_identified_item_rate);
    t[11].append<int64_t>(m.max_collision);
    t[12].append<double>(m.gini);
    t[13].append<double>(m.entropy);
    t[14].append<double>(m.max_entropy);
    t[15].append<double>(m.entropy_ratio);
    t.end_row();
  }
  t.close();
}

void write_layer_stats(const SidQualityOptions& o, const SidQualityEvaluation& e, const std::string& writer_type) {
  std::vector<data::TypedOutputColumn> columns = common_columns();
  columns.push_back({"layer", PhysicalType::kInt64});
  columns.push_back({"codebook_size", PhysicalType::kInt64});
  columns.push_back({"coverage", PhysicalType::kDouble});
  columns.push_back({"dead_codes", PhysicalType::kInt64});
  columns.push_back({"perplexity", PhysicalType::kDouble});
  data::TypedOutputTable t(writer_type, o.layer_stats_output, columns);
  for (const SidQualityView& v : e.views) {
    for (const SidLayerQualityMetrics& l : v.result.layer_metrics) {
      append_common(t, o, e, v);
      t[7].append<int64_t>(l.layer);
      t[8].append<int64_t>(l.codebook_size);
      t[9].append<double>(l.coverage);
      t[10].append<int64_t>(l.dead_codes);
      t[11].append<double>(l.perplexity);
      t.end_row();
    }
  }
  t.close();
}

}  // namespace

std::vector<int64_t> parse_sid_codebook(const std::string& text) {
  std::vector<int64_t> sizes;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string token = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t v = 0;
    if (!parse_python_int(token, &v)) throw UsageError(fmt::format("--codebook must be 'int,int,...', got '{}'", text));
    if (v < 1) throw UsageError(fmt::format("--codebook sizes must be positive ints, got '{}'", text));
    sizes.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

SidQualityEvaluation evaluate_sid_quality(data::BatchSource& source, const SidQualityOptions& o) {
  const bool compare = !o.origin_codes_field.empty();
  SidQualityAccumulator after(o.codebook, o.log_top_sids);
  std::optional<SidQualityAccumulator> before;
  if (compare) before.emplace(o.codebook, o.log_top_sids);
  SidQualityEvaluation e;
  int64_t malformed_before = 0, malformed_after = 0, out_of_range_before = 0, out_of_range_after = 0;
  int64_t batch_index = 0;
  while (std::optional<data::SourcedBatch> sourced = source.next()) {
    const data::RecordBatch& batch = sourced->records;
    const CheckedCodes a = check_codes(batch, o.codes_field, o.codebook);
    malformed_after += a.malformed;
    out_of_range_after += a.out_of_range;
    std::optional<CheckedCodes> b;
    if (compare) {
      b = check_codes(batch, o.origin_codes_field, o.codebook);
      malformed_before += b->malformed;
      out_of_range_before += b->out_of_range;
    }
    const int64_t n = batch.num_rows();
    e.input_rows += n;
    int64_t batch_invalid = 0, first_invalid = -1;
    for (int64_t r = 0; r < n; ++r) {
      const bool ok = a.valid[static_cast<size_t>(r)] && (!b || b->valid[static_cast<size_t>(r)]);
      if (!ok) {
        if (first_invalid < 0) first_invalid = r;
        ++batch_invalid;
        continue;
      }
      if (before) before->add(b->rows.row(r));
      after.add(a.rows.row(r));
    }
    if (batch_invalid > 0 && o.invalid_row_policy == "error") {
      const bool origin_bad = b && !b->valid[static_cast<size_t>(first_invalid)];
      const std::string why = origin_bad ? why_invalid(*b, first_invalid, o.origin_codes_field, o.codebook)
                                         : why_invalid(a, first_invalid, o.codes_field, o.codebook);
      throw DataError(fmt::format("{}: {}; batch {} holds {} malformed or out-of-range SID rows (--invalid_row_policy "
                                  "drop skips them)",
                                  batch.describe_row(first_invalid), why, batch_index, batch_invalid));
    }
    e.invalid_rows += batch_invalid;
    if (batch_index % 100 == 0) log::info("scanned {} rows...", e.input_rows);
    ++batch_index;
  }
  e.evaluated_items = e.input_rows - e.invalid_rows;
  if (e.invalid_rows > 0) {
    log::warning("skipped {} invalid rows (before: {} malformed, {} out-of-range; after: {} malformed, {} "
                 "out-of-range); stats cover {} rows.",
                 e.invalid_rows, malformed_before, out_of_range_before, malformed_after, out_of_range_after,
                 e.evaluated_items);
  }
  if (e.evaluated_items == 0) {
    throw DataError(fmt::format("{}: no valid rows of field '{}' (codebook {}); nothing to report", o.input_path,
                                o.codes_field, joined(o.codebook)));
  }
  if (before) {
    SidQualityResult b = before->finalize();
    SidQualityResult a = after.finalize();
    SidQualityResult d = compare_sid_quality(b, a);
    e.views.push_back({"before", o.origin_codes_field, std::move(b)});
    e.views.push_back({"after", o.codes_field, std::move(a)});
    e.views.push_back({"delta", o.origin_codes_field + "->" + o.codes_field, std::move(d)});
  } else {
    e.views.push_back({"single", o.codes_field, after.finalize()});
  }
  for (const SidQualityView& v : e.views) log_view(v);
  return e;
}

SidQualityEvaluation run_evaluate_sid_quality(const SidQualityOptions& o) {
  if (o.input_path.empty()) throw UsageError("--input_path is required");
  if (o.origin_codes_field == o.codes_field) {
    throw UsageError("--origin_codes_field and --codes_field must be different.");
  }
  if (o.invalid_row_policy != "drop" && o.invalid_row_policy != "error") {
    throw UsageError(fmt::format("--invalid_row_policy {}: use drop or error", o.invalid_row_policy));
  }
  if (o.log_top_sids < 0) throw UsageError(fmt::format("--log_top_sids must be a positive int, got {}", o.log_top_sids));
  if (o.batch_size < 1) throw UsageError(fmt::format("--batch_size {}: must be >= 1", o.batch_size));
  check_sid_codebook(o.codebook);
  std::vector<std::string> paths = {o.input_path};
  for (const std::string* p : {&o.summary_output, &o.layer_stats_output}) {
    if (!p->empty()) paths.push_back(*p);
  }
  if (std::optional<std::string> conflict = data::find_path_conflict(paths)) throw UsageError(*conflict);

  const data::TableFormat format = data::table_format(o.reader_type, o.input_path, "evaluate_sid_quality");
  std::string writer_type = o.writer_type;
  if (writer_type.empty()) writer_type = format == data::TableFormat::kCsv ? "CsvWriter" : "ParquetWriter";
  if (writer_type != "CsvWriter" && writer_type != "ParquetWriter") {
    if (writer_type == "OdpsWriter") throw NotSupportedError("evaluate_sid_quality --writer_type OdpsWriter (MaxCompute tables)");
    throw UsageError(fmt::format("--writer_type {}: use ParquetWriter or CsvWriter", writer_type));
  }
  std::vector<std::string> fields = {o.codes_field};
  if (!o.origin_codes_field.empty()) fields.insert(fields.begin(), o.origin_codes_field);
  data::require_table_columns(format, o.input_path, fields, "selected SID fields");
  data::DatasetSources sources = data::open_table(format, o.input_path, fields, o.batch_size, /*workers=*/1,
                                                  /*rank=*/0, /*world_size=*/1);
  SidQualityEvaluation e = evaluate_sid_quality(*sources.sources.at(0), o);
  if (!o.summary_output.empty()) {
    write_summary(o, e, writer_type);
    log::info("wrote summary to {}", o.summary_output);
  }
  if (!o.layer_stats_output.empty()) {
    write_layer_stats(o, e, writer_type);
    log::info("wrote per-layer stats to {}", o.layer_stats_output);
  }
  return e;
}

}  // namespace tzrec::retrieval
