#include "retrieval/faiss_index.h"

#include <filesystem>
#include <fstream>
#include <memory>

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/FaissException.h>
#include <faiss/index_io.h>
#include <fmt/format.h>

#include "base/error.h"
#include "base/logging.h"
#include "retrieval/embedding_table.h"

namespace tzrec::retrieval {

int64_t create_faiss_index(const FaissIndexOptions& o) {
  namespace fs = std::filesystem;
  const bool ivf = o.index_type == "IVFFlatIP" || o.index_type == "IVFFlatL2";
  const bool hnsw = o.index_type == "HNSWFlatIP" || o.index_type == "HNSWFlatL2";
  if (!ivf && !hnsw) {
    throw UsageError(fmt::format("--index_type {}: use IVFFlatIP, HNSWFlatIP, IVFFlatL2 or HNSWFlatL2", o.index_type));
  }
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"--embedding_input_path",
                                                                               &o.embedding_input_path},
                                    {"--index_output_dir", &o.index_output_dir},
                                    {"--id_field", &o.id_field},
                                    {"--embedding_field", &o.embedding_field}}) {
    if (value->empty()) throw UsageError(fmt::format("{} is required", flag));
  }
  for (const auto& [flag, value] : {std::pair<const char*, int64_t>{"--batch_size", o.batch_size},
                                    {"--ivf_nlist", o.ivf_nlist},
                                    {"--hnsw_M", o.hnsw_M},
                                    {"--hnsw_efConstruction", o.hnsw_efConstruction}}) {
    if (value < 1) throw UsageError(fmt::format("{} must be at least 1, got {}", flag, value));
  }
  const EmbeddingTable table =
      read_embedding_table(o.embedding_input_path, o.reader_type, o.id_field, o.embedding_field, o.batch_size,
                           {"create_faiss_index", "--id_field", "--embedding_field", "embedding"});
  const int64_t n = table.embeddings.size(0);
  const int64_t d = table.embeddings.size(1);
  if (ivf && o.ivf_nlist > n) {
    throw UsageError(fmt::format("--ivf_nlist {} is more than the {} embeddings of {}; k-means needs at least one per "
                                 "list: give at most {}",
                                 o.ivf_nlist, n, o.embedding_input_path, n));
  }
  const bool inner_product = o.index_type.size() > 2 && o.index_type.compare(o.index_type.size() - 2, 2, "IP") == 0;
  const faiss::MetricType metric = inner_product ? faiss::METRIC_INNER_PRODUCT : faiss::METRIC_L2;
  log::info("create_faiss_index: building {} over {} embeddings of dim {}", o.index_type, n, d);
  const float* x = table.embeddings.data_ptr<float>();
  std::unique_ptr<faiss::Index> quantizer;
  std::unique_ptr<faiss::Index> index;
  try {
    if (ivf) {
      if (inner_product) {
        quantizer = std::make_unique<faiss::IndexFlatIP>(d);
      } else {
        quantizer = std::make_unique<faiss::IndexFlatL2>(d);
      }
      index = std::make_unique<faiss::IndexIVFFlat>(quantizer.get(), d, static_cast<size_t>(o.ivf_nlist), metric);
      index->train(n, x);
    } else {
      auto h = std::make_unique<faiss::IndexHNSWFlat>(static_cast<int>(d), static_cast<int>(o.hnsw_M), metric);
      h->hnsw.efConstruction = static_cast<int>(o.hnsw_efConstruction);
      index = std::move(h);
    }
    index->add(n, x);
  } catch (const faiss::FaissException& e) {
    throw UsageError(fmt::format("create_faiss_index: faiss could not build the {} index: {}", o.index_type, e.what()));
  }
  std::error_code ec;
  fs::create_directories(o.index_output_dir, ec);
  const std::string index_path = (fs::path(o.index_output_dir) / "faiss_index").string();
  try {
    faiss::write_index(index.get(), index_path.c_str());
  } catch (const faiss::FaissException& e) {
    throw IoError(fmt::format("cannot write {}: {}", index_path, e.what()));
  }
  const std::string map_path = (fs::path(o.index_output_dir) / "id_mapping").string();
  std::ofstream out(map_path);
  for (const std::string& id : table.ids) out << id << '\n';
  out.close();
  if (!out) throw IoError(fmt::format("cannot write {}", map_path));
  log::info("create_faiss_index: wrote {} ({} embeddings) and {}", index_path, index->ntotal, map_path);
  return n;
}

}  // namespace tzrec::retrieval
