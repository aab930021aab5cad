// PredictionWriter for writer_type ParquetWriter (see prediction_writer.h for the column types):
// one Parquet file written with parquet::FileWriter, created at the first batch. No torch.
#pragma once

#include <memory>
#include <string>

#include "data/prediction_writer.h"
#include "parquet/writer.h"

namespace tzrec::data {

class ParquetPredictionWriter : public PredictionWriter {
 public:
  ParquetPredictionWriter(std::string path, parquet::WriterOptions options);
  ~ParquetPredictionWriter() override;

 protected:
  void write_batch(const PredictionBatch& batch, bool first) override;
  void finish() override;

 private:
  parquet::WriterOptions options_;
  std::unique_ptr<parquet::FileWriter> writer_;
};

}  // namespace tzrec::data
