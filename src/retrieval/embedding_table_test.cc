// read_embedding_table (retrieval/embedding_table.h): the same ids and embeddings from a CSV table
// with ','-joined text and from a Parquet table with list<float> cells (values written by hand
// here), and one error naming the file, row and column for a row of another width.
#include "retrieval/embedding_table.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::retrieval {
namespace embedding_table_test {

const EmbeddingTableNames kNames{"create_faiss_index", "--id_field", "--embedding_field", "embedding"};

TEST(EmbeddingTable, CsvTextAndParquetListsReadAlike) {
  data::testing::TempDir dir;
  const std::string csv = dir.write("items.csv", "id,emb\na,\"1,2,3\"\n7,\"-1.5,0,2.25\"\n");
  data::testing::write_id_embedding_parquet(dir.file("items.parquet"), {{"a", {1, 2, 3}}, {"7", {-1.5f, 0, 2.25f}}});
  const torch::Tensor expected = torch::tensor({{1.0f, 2.0f, 3.0f}, {-1.5f, 0.0f, 2.25f}});
  for (const std::string& path : {csv, dir.file("items.parquet")}) {
    const EmbeddingTable t = read_embedding_table(path, "", "id", "emb", 1, kNames);
    EXPECT_EQ(t.ids, (std::vector<std::string>{"a", "7"})) << path;
    EXPECT_TRUE(torch::equal(t.embeddings, expected)) << path << t.embeddings;
  }
}

TEST(EmbeddingTable, ARowOfAnotherWidthIsNamed) {
  data::testing::TempDir dir;
  const std::string csv = dir.write("items.csv", "id,emb\na,\"1,2,3\"\nb,\"1,2\"\n");
  try {
    read_embedding_table(csv, "", "id", "emb", 8, kNames);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("items.csv line 3 column emb: 2 embedding values, expected 1 vector(s) of "
                                         "width 3"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(read_embedding_table(dir.write("empty.csv", "id,emb\n"), "", "id", "emb", 8, kNames), DataError);
}

}  // namespace embedding_table_test
}  // namespace tzrec::retrieval
