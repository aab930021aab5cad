// PredictionWriter for writer_type CsvWriter (see prediction_writer.h for the text format): a
// header line at the first batch, then one line per row. No torch.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "data/prediction_writer.h"

namespace tzrec::data {

class CsvPredictionWriter : public PredictionWriter {
 public:
  // delimiter: any byte except '"', '\n' and '\r' (else UsageError).
  CsvPredictionWriter(std::string path, char delimiter);
  ~CsvPredictionWriter() override;

 protected:
  void write_batch(const PredictionBatch& batch, bool first) override;
  void finish() override;

 private:
  // Appends one field, quoted when it holds the delimiter, '"', '\n' or '\r'.
  void append_field(std::string_view field, std::string* line) const;

  char delimiter_;
  std::FILE* file_ = nullptr;
  int64_t num_columns_ = 0;
};

}  // namespace tzrec::data
