#include "retrieval/hitrate_job.h"

#include <charconv>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>

#include "base/error.h"
#include "base/logging.h"
#include "data/table_sources.h"
#include "data/file_output.h"
#include "dist/process_group.h"
#include "feature/column_cells.h"
#include "parquet/writer.h"
#include "retrieval/embedding_table.h"
#include "retrieval/exact_top_k.h"
#include "retrieval/hitrate.h"

namespace tzrec::retrieval {
namespace {

constexpr int64_t kItemBlock = 16384;  // items per GEMM of the search

std::unique_ptr<data::BatchSource> open_table(const HitrateOptions& o, const std::string& path,
                                              const std::vector<std::string>& columns, int rank, int world_size) {
  data::DatasetSources sources = data::open_table(data::table_format(o.reader_type, path, "hitrate"), path, columns,
                                                  o.batch_size, /*workers=*/1, rank, world_size);
  return std::move(sources.sources.at(0));
}

// Writes Parquet part files of the details (id, topk_ids, topk_dists, hitrate, hit_ids) or the
// total (hitrate).
class DetailsWriter {
 public:
  DetailsWriter(const std::string& dir, int rank) {
    std::filesystem::create_directories(dir);
    using parquet::PhysicalType;
    std::vector<parquet::WriterField> fields = {
        {"id", PhysicalType::kByteArray, true, 0},    {"topk_ids", PhysicalType::kByteArray, true, 2},
        {"topk_dists", PhysicalType::kFloat, true, 2, true, false}, {"hitrate", PhysicalType::kDouble, true, 0},
        {"hit_ids", PhysicalType::kByteArray, true, 1}};
    path_ = fmt::format("{}/part-{}.parquet", dir, rank);
    writer_ = std::make_unique<parquet::FileWriter>(path_ + ".tmp", std::move(fields));
  }
  struct Row {
    std::string id;
    std::vector<std::vector<std::string>> topk_ids;
    std::vector<std::vector<float>> topk_dists;
    double hitrate = 0;
    std::vector<std::string> hit_ids;
  };
  void write(const std::vector<Row>& rows) {
    const parquet::Schema& schema = writer_->schema();
    std::vector<parquet::ColumnBuilder> b;
    for (int c = 0; c < 5; ++c) b.emplace_back(schema.column(c));
    for (const Row& r : rows) {
      b[0].append_string(r.id);
      b[1].begin_list();
      for (const auto& interest : r.topk_ids) {
        b[1].begin_list();
        for (const auto& id : interest) b[1].append_string(id);
        b[1].end_list();
      }
      b[1].end_list();
      b[2].begin_list();
      for (const auto& interest : r.topk_dists) {
        b[2].begin_list();
        for (float d : interest) b[2].append(d);
        b[2].end_list();
      }
      b[2].end_list();
      b[3].append(r.hitrate);
      b[4].begin_list();
      for (const auto& id : r.hit_ids) b[4].append_string(id);
      b[4].end_list();
    }
    parquet::Table table;
    table.num_rows = static_cast<int64_t>(rows.size());
    for (auto& builder : b) table.columns.push_back(builder.finish());
    writer_->write(std::move(table));
  }
  void finish() {
    writer_->close();
    writer_.reset();
    data::rename_into_place(path_ + ".tmp", path_, "hitrate");
  }

 private:
  std::string path_;
  std::unique_ptr<parquet::FileWriter> writer_;
};

void write_total(const std::string& dir, double hitrate) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/part-0.parquet";
  data::write_parquet_file(path, {{"hitrate", parquet::PhysicalType::kDouble, false, 0}}, {}, "hitrate",
                           [&](parquet::FileWriter& w) {
                             parquet::ColumnBuilder b(w.schema().column(0));
                             b.append(hitrate);
                             parquet::Table t;
                             t.num_rows = 1;
                             t.columns.push_back(b.finish());
                             w.write(std::move(t));
                           });
}

}  // namespace

HitrateResult run_hitrate(const HitrateOptions& o) {
  if (o.user_gt_input.empty()) throw UsageError("--user_gt_input is required");
  if (o.item_embedding_input.empty()) throw UsageError("--item_embedding_input is required");
  if (o.top_k < 1) throw UsageError(fmt::format("--top_k {}: must be >= 1", o.top_k));
  if (o.batch_size < 1) throw UsageError(fmt::format("--batch_size {}: must be >= 1", o.batch_size));
  if (o.num_interests < 1) throw UsageError(fmt::format("--num_interests {}: must be >= 1", o.num_interests));
  Metric metric;
  if (o.index_type == "IVFFlatIP") {
    metric = Metric::kInnerProduct;
  } else if (o.index_type == "IVFFlatL2") {
    metric = Metric::kL2;
  } else {
    throw UsageError("--index_type " + o.index_type + ": use IVFFlatIP (inner product) or IVFFlatL2");
  }
  if (!o.writer_type.empty() && o.writer_type != "ParquetWriter") {
    throw NotSupportedError("hitrate --writer_type " + o.writer_type + " (outputs are Parquet)");
  }
  const dist::DistEnv env = dist::dist_env_from_environment();
  std::shared_ptr<dist::ProcessGroup> pg;
  if (env.world_size > 1) pg = dist::ProcessGroup::create(env);

  const EmbeddingTable items = read_embedding_table(o.item_embedding_input, o.reader_type, o.item_id_field,
                                                    o.item_embedding_field, o.batch_size,
                                                    {"hitrate", "--item_id_field", "--item_embedding_field", "item"});
  const int64_t dim = items.embeddings.size(1);
  log::info("hitrate: {} items of dim {}", items.ids.size(), dim);

  std::vector<std::string> columns = {o.request_id_field, o.gt_items_field, o.user_embedding_field};
  if (!o.num_interests_field.empty()) columns.push_back(o.num_interests_field);
  auto users = open_table(o, o.user_gt_input, columns, env.rank, env.world_size);
  std::unique_ptr<DetailsWriter> details;
  if (!o.hitrate_details_output.empty()) details = std::make_unique<DetailsWriter>(o.hitrate_details_output, env.rank);

  HitrateResult result;
  const int64_t interests = o.num_interests;
  while (auto batch = users->next()) {
    const data::RecordBatch& rb = batch->records;
    const int64_t rows = rb.num_rows();
    feature::ColumnCells request_ids(rb, o.request_id_field, "hitrate --request_id_field");
    feature::ColumnCells gt_cells(rb, o.gt_items_field, "hitrate --gt_items_field");
    feature::ColumnCells emb(rb, o.user_embedding_field, "hitrate --user_embedding_field", /*sequence=*/true);
    std::vector<float> values;
    int64_t user_dim = dim;
    for (int64_t r = 0; r < rows; ++r) read_embeddings(rb, emb, r, interests, &user_dim, &values);
    torch::Tensor queries = torch::from_blob(values.data(), {rows * interests, dim}, torch::kFloat32);
    ExactTopK search(queries, o.top_k, metric);
    for (int64_t first = 0; first < items.embeddings.size(0); first += kItemBlock) {
      search.add_items(items.embeddings.slice(0, first, first + kItemBlock), first);
    }
    const ExactTopK::Result top = search.result();
    const torch::Tensor scores = top.scores.view({rows, interests, -1});
    const torch::Tensor indices = top.indices.view({rows, interests, -1});
    const torch::Tensor nonzero = queries.ne(0).any(1).view({rows, interests});
    std::vector<DetailsWriter::Row> detail_rows;
    std::optional<feature::ColumnCells> valid_cells;
    if (!o.num_interests_field.empty()) valid_cells.emplace(rb, o.num_interests_field, "hitrate --num_interests_field");
    for (int64_t r = 0; r < rows; ++r) {
      int64_t valid = interests;
      if (valid_cells) {
        const feature::CellValue v = valid_cells->scalar(r);
        bool ok = v.kind == feature::CellValue::Kind::kInt;
        if (ok) {
          valid = v.i;
        } else if (v.kind == feature::CellValue::Kind::kText) {
          auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), valid);
          ok = ec == std::errc() && p == v.text.data() + v.text.size();
        }
        if (!ok || valid < 0) {
          throw DataError(fmt::format("{}: the number of valid interests must be an integer >= 0",
                                      valid_cells->where(r)));
        }
      }
      std::vector<std::vector<std::string>> recalled;
      std::vector<std::vector<float>> dists;
      if (o.topk_across_interests) {
        std::vector<float> s;
        std::vector<int64_t> ix;
        merge_interests(scores[r], indices[r], nonzero[r], valid, o.top_k, metric, &s, &ix);
        recalled.emplace_back();
        for (int64_t i : ix) recalled.back().push_back(items.ids[static_cast<size_t>(i)]);
        dists.push_back(std::move(s));
      } else {
        for (int64_t i = 0; i < interests; ++i) {
          recalled.emplace_back();
          dists.emplace_back();
          auto ix = indices[r][i];
          auto sc = scores[r][i];
          for (int64_t j = 0; j < ix.size(0); ++j) {
            recalled.back().push_back(items.ids[static_cast<size_t>(ix[j].item<int64_t>())]);
            dists.back().push_back(sc[j].item<float>());
          }
        }
      }
      std::vector<std::string> gt;
      if (!gt_cells.empty(r)) {
        gt_cells.for_each(r, ",", [&](const feature::CellValue& v) {
          if (v.kind != feature::CellValue::Kind::kText || !v.text.empty()) gt.push_back(id_text(v));  // "a,,b"
        });
      }
      const RequestHits hits = request_hits(recalled, gt, o.topk_across_interests ? 1 : valid);
      const std::string id = id_text(request_ids.scalar(r));
      if (hits.skipped) {
        log::warning("hitrate: request {} ({}) has no ground-truth item; skipped", id, rb.describe_row(r));
        continue;
      }
      result.hits += hits.hits;
      result.gt_count += hits.gt_count;
      if (details) detail_rows.push_back({id, std::move(recalled), std::move(dists), hits.hitrate, hits.hit_ids});
    }
    result.requests += rows;
    if (details) details->write(detail_rows);
  }
  if (details) details->finish();
  if (pg) {
    torch::Tensor totals = torch::tensor({result.hits, result.gt_count}, torch::kFloat64);
    pg->all_reduce(totals, dist::ReduceOp::kSum, "hitrate totals");
    result.hits = totals[0].item<double>();
    result.gt_count = totals[1].item<double>();
  }
  if (result.gt_count == 0) throw DataError(o.user_gt_input + ": no request has ground-truth items");
  result.hitrate = result.hits / result.gt_count;
  if (env.rank == 0) {
    log::info("Total hitrate: {}", result.hitrate);
    if (!o.total_hitrate_output.empty()) write_total(o.total_hitrate_output, result.hitrate);
  }
  return result;
}

}  // namespace tzrec::retrieval
