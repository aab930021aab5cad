#include "checkpoint/sharded_checkpoint.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "data/testing_util.h"

namespace tzrec::checkpointing {
namespace sharded_checkpoint_test {

namespace fs = std::filesystem;

using data::testing::TempDir;

// Expects fn() to throw CheckpointError whose message contains every fragment.
void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> fragments) {
  try {
    fn();
    ADD_FAILURE() << "expected CheckpointError";
  } catch (const CheckpointError& e) {
    const std::string msg = e.what();
    for (const auto& f : fragments)
      EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

const char* const kTableA = "model.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.t0.weight";
const char* const kTableB = "model.embedding_group.emb_impls.__BASE__.ebc.embedding_bags.t1.weight";
const char* const kMomentum = "sparse.t0.momentum1";
const char* const kStep = "sparse.t0.step";

// A[r][c] = 8r + c: [10, 8] float.
torch::Tensor table_a() { return torch::arange(80, torch::kFloat32).reshape({10, 8}); }
// B[r][c] = 100r + c: [6, 4] int32.
torch::Tensor table_b() {
  return (torch::arange(6, torch::kInt32).unsqueeze(1) * 100 + torch::arange(4, torch::kInt32))
      .contiguous();
}
// m[r] = r / 2: [10] float (row-wise optimizer state of A).
torch::Tensor momentum() { return torch::arange(10, torch::kFloat32) * 0.5; }

// A and m as row blocks of 3, 3, 3, 1 rows on 4 ranks, B as column blocks [0, 2) on rank 0 and
// [2, 4) on rank 1, the step scalar (7) on every rank.
void write_four_ranks(const std::string& dir, int64_t step_on_rank3 = 7) {
  const int64_t starts[] = {0, 3, 6, 9};
  const int64_t sizes[] = {3, 3, 3, 1};
  for (int r = 0; r < 4; ++r) {
    std::vector<TensorBlock> model = {
        {kTableA, {10, 8}, starts[r], 0, table_a().slice(0, starts[r], starts[r] + sizes[r])}};
    if (r < 2) model.push_back({kTableB, {6, 4}, 0, 2 * r, table_b().slice(1, 2 * r, 2 * r + 2)});
    const std::vector<TensorBlock> optimizer = {
        {kMomentum, {10}, starts[r], 0, momentum().slice(0, starts[r], starts[r] + sizes[r])},
        {kStep, {}, 0, 0, torch::tensor(r == 3 ? step_on_rank3 : 7, torch::kInt64)}};
    save_rank_blocks(dir, "model", r, 4, model);
    save_rank_blocks(dir, "optimizer", r, 4, optimizer);
  }
}

TEST(ShardedCheckpoint, FileNamesAndLayout) {
  TempDir dir;
  write_four_ranks(dir.path());
  EXPECT_EQ(rank_block_file("/x", "model", 3, 4), "/x/model-000003-of-000004.safetensors");
  // The file is a plain safetensors file: the logical name as key (one block on this rank) and
  // the documented metadata.
  const SafetensorsFile f = load_safetensors(dir.file("model-000001-of-000004.safetensors"));
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_TRUE(torch::equal(f.tensors.at(kTableA), table_a().slice(0, 3, 6)));
  EXPECT_TRUE(torch::equal(f.tensors.at(kTableB), table_b().slice(1, 2, 4)));
  EXPECT_EQ(nlohmann::json::parse(f.metadata.at(kTableB)),
            nlohmann::json::parse(std::string(R"({"name":")") + kTableB +
                                  R"(","global_shape":[6,4],"offsets":[0,2]})"));
  EXPECT_EQ(nlohmann::json::parse(f.metadata.at("__format__")),
            nlohmann::json::parse(
                R"({"format":"tzrec.tensor_blocks","version":1,"rank":1,"world_size":4})"));
  const SafetensorsFile o = load_safetensors(dir.file("optimizer-000003-of-000004.safetensors"));
  EXPECT_EQ(nlohmann::json::parse(o.metadata.at(kMomentum)),
            nlohmann::json::parse(std::string(R"({"name":")") + kMomentum +
                                  R"(","global_shape":[10],"offsets":[9]})"));
  EXPECT_EQ(nlohmann::json::parse(o.metadata.at(kStep)),
            nlohmann::json::parse(std::string(R"({"name":")") + kStep +
                                  R"(","global_shape":[],"offsets":[]})"));

  // Two blocks of one tensor on one rank: "<name>@<row>,<col>" keys; identical copies of a
  // block (here the scalar) are stored once; empty blocks are dropped.
  TempDir two;
  save_rank_blocks(two.path(), "model", 0, 1,
                   {{"w", {4, 2}, 0, 0, torch::ones({4, 1})},
                    {"w", {4, 2}, 0, 1, torch::zeros({4, 1})},
                    {"w", {4, 2}, 4, 0, torch::zeros({0, 2})},
                    {"s", {}, 0, 0, torch::tensor(3)},
                    {"s", {}, 0, 0, torch::tensor(3)}});
  const SafetensorsFile t = load_safetensors(two.file("model-000000-of-000001.safetensors"));
  EXPECT_EQ(t.tensors.size(), 3u);
  EXPECT_EQ(t.tensors.count("w@0,0"), 1u);
  EXPECT_EQ(t.tensors.count("w@0,1"), 1u);
  EXPECT_EQ(t.tensors.count("s"), 1u);
  EXPECT_FALSE(fs::exists(two.file("model-000000-of-000001.safetensors.tmp")));
}

TEST(ShardedCheckpoint, ReadsWholeTensors) {
  TempDir dir;
  write_four_ranks(dir.path());
  const CheckpointTensorIndex index(dir.path());
  EXPECT_EQ(index.stored_world_size(), 4);
  EXPECT_EQ(index.names(), (std::vector<std::string>{kTableA, kTableB, kMomentum, kStep}));
  EXPECT_TRUE(index.contains(kTableB));
  EXPECT_FALSE(index.contains("nope"));
  EXPECT_EQ(index.shape(kTableA), (std::vector<int64_t>{10, 8}));
  EXPECT_EQ(index.shape(kMomentum), (std::vector<int64_t>{10}));
  EXPECT_EQ(index.shape(kStep), (std::vector<int64_t>{}));
  EXPECT_EQ(index.dtype(kTableB), torch::kInt32);
  EXPECT_TRUE(torch::equal(index.read_whole(kTableA), table_a()));
  EXPECT_TRUE(torch::equal(index.read_whole(kTableB), table_b()));
  EXPECT_TRUE(torch::equal(index.read_whole(kMomentum), momentum()));
  const torch::Tensor step = index.read_whole(kStep);
  EXPECT_EQ(step.dim(), 0);
  EXPECT_EQ(step.item<int64_t>(), 7);
  // 0-D: the block arguments are ignored.
  EXPECT_EQ(index.read_block(kStep, 3, 1, 2, 2).item<int64_t>(), 7);
  expect_error([&] { index.shape("nope"); }, {dir.path(), "no tensor 'nope'"});
}

TEST(ShardedCheckpoint, ReSplitsOnOtherWorldSizes) {
  TempDir dir;
  write_four_ranks(dir.path());
  const CheckpointTensorIndex index(dir.path());
  for (int64_t world : {1, 2, 3}) {
    // Row-wise blocks of ceil(rows / world) rows (the planner's split), all columns.
    const int64_t block_rows = (10 + world - 1) / world;
    for (int64_t r0 = 0; r0 < 10; r0 += block_rows) {
      const int64_t n = std::min<int64_t>(block_rows, 10 - r0);
      EXPECT_TRUE(
          torch::equal(index.read_block(kTableA, r0, n, 0, 8), table_a().slice(0, r0, r0 + n)))
          << world << " " << r0;
      EXPECT_TRUE(
          torch::equal(index.read_block(kMomentum, r0, n, 0, 0), momentum().slice(0, r0, r0 + n)));
      const int64_t b_rows = std::min<int64_t>(block_rows, 6 - std::min<int64_t>(r0, 6));
      EXPECT_TRUE(torch::equal(
          index.read_block(kTableB, std::min<int64_t>(r0, 6), b_rows, 0, 4),
          table_b().slice(0, std::min<int64_t>(r0, 6), std::min<int64_t>(r0, 6) + b_rows)));
    }
    // Column-wise blocks of ceil(cols / world) columns, all rows.
    for (int64_t cols : {int64_t{8}, int64_t{4}}) {
      const char* name = cols == 8 ? kTableA : kTableB;
      const torch::Tensor full = cols == 8 ? table_a() : table_b();
      const int64_t block_cols = (cols + world - 1) / world;
      for (int64_t c0 = 0; c0 < cols; c0 += block_cols) {
        const int64_t n = std::min(block_cols, cols - c0);
        EXPECT_TRUE(
            torch::equal(index.read_block(name, 0, full.size(0), c0, n), full.slice(1, c0, c0 + n)))
            << name << " " << world << " " << c0;
      }
    }
  }
  // A block across row pieces (rows 2..6 lie in three pieces) and a column sub-range: hand-checked.
  const torch::Tensor a = index.read_block(kTableA, 2, 5, 3, 3);
  ASSERT_EQ(a.sizes(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(a[0][0].item<float>(), 19.0f);  // A[2][3]
  EXPECT_EQ(a[4][2].item<float>(), 53.0f);  // A[6][5]
  EXPECT_TRUE(torch::equal(a, table_a().slice(0, 2, 7).slice(1, 3, 6)));
  // A block across the two column pieces of B.
  const torch::Tensor b = index.read_block(kTableB, 1, 4, 1, 2);
  EXPECT_EQ(b[0][0].item<int32_t>(), 101);
  EXPECT_EQ(b[0][1].item<int32_t>(), 102);
  EXPECT_EQ(b[3][1].item<int32_t>(), 402);
  // 1-D across pieces: m[2..8) = 1.0 .. 3.5.
  const torch::Tensor m = index.read_block(kMomentum, 2, 6, 0, 0);
  EXPECT_TRUE(torch::equal(m, torch::tensor({1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f})));
  // Empty blocks.
  EXPECT_EQ(index.read_block(kTableA, 10, 0, 0, 8).sizes(), (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(index.read_block(kMomentum, 4, 0, 0, 0).sizes(), (std::vector<int64_t>{0}));
  // Outside the tensor.
  expect_error([&] { index.read_block(kTableA, 8, 3, 0, 8); },
               {kTableA, "[10, 8]", "rows [8, 11) lie outside [0, 10)"});
  expect_error([&] { index.read_block(kTableA, 0, 1, 6, 3); }, {"columns [6, 9)"});
}

TEST(ShardedCheckpoint, MixedWholeFilesAndBlockFiles) {
  TempDir dir;
  const torch::Tensor dense = torch::tensor({{1.5, -2.0}, {3.0, 4.0}, {5.0, 6.0}}, torch::kFloat64);
  const torch::Tensor tall = torch::arange(24, torch::kInt64).reshape({2, 3, 4});
  save_safetensors(dir.file("model.safetensors"),
                   {{"model.dense.weight", dense}, {"model.cube", tall}});
  save_safetensors(dir.file("optimizer.safetensors"),
                   {{"dense.model.dense.weight.exp_avg", dense * 2}});
  // A data-parallel style table: every rank holds it whole (overlapping blocks).
  for (int r = 0; r < 2; ++r) {
    save_rank_blocks(dir.path(), "model", r, 2,
                     {{kTableA, {10, 8}, 5 * r, 0, table_a().slice(0, 5 * r, 5 * r + 5)},
                      {"model.replicated", {3, 2}, 0, 0, dense.to(torch::kFloat32)}});
    save_rank_blocks(dir.path(), "optimizer", r, 2, {});
  }
  const CheckpointTensorIndex index(dir.path());
  EXPECT_EQ(index.stored_world_size(), 2);
  EXPECT_EQ(index.names(),
            (std::vector<std::string>{"dense.model.dense.weight.exp_avg", "model.cube",
                                      "model.dense.weight", kTableA, "model.replicated"}));
  EXPECT_EQ(index.dtype("model.dense.weight"), torch::kFloat64);
  EXPECT_TRUE(torch::equal(index.read_whole("model.dense.weight"), dense));
  EXPECT_TRUE(torch::equal(index.read_block("model.dense.weight", 1, 2, 1, 1),
                           dense.slice(0, 1, 3).slice(1, 1, 2)));
  EXPECT_TRUE(torch::equal(index.read_whole("dense.model.dense.weight.exp_avg"), dense * 2));
  // N-D whole tensors: rows along dim 0.
  EXPECT_TRUE(torch::equal(index.read_whole("model.cube"), tall));
  EXPECT_TRUE(torch::equal(index.read_block("model.cube", 1, 1, 0, 0), tall.slice(0, 1, 2)));
  EXPECT_TRUE(torch::equal(index.read_whole(kTableA), table_a()));
  EXPECT_TRUE(torch::equal(index.read_block("model.replicated", 1, 2, 0, 2),
                           dense.to(torch::kFloat32).slice(0, 1, 3)));

  // Only whole files: world size 1.
  TempDir single;
  save_safetensors(single.file("model.safetensors"), {{"x", torch::ones({2})}});
  const CheckpointTensorIndex only(single.path());
  EXPECT_EQ(only.stored_world_size(), 1);
  EXPECT_EQ(only.names(), std::vector<std::string>{"x"});
}

TEST(ShardedCheckpoint, ReaderErrors) {
  {  // A missing rank file is named.
    TempDir dir;
    write_four_ranks(dir.path());
    fs::remove(dir.file("optimizer-000002-of-000004.safetensors"));
    expect_error([&] { CheckpointTensorIndex index(dir.path()); },
                 {"missing", dir.file("optimizer-000002-of-000004.safetensors"), "rank 2 of 4",
                  "incomplete"});
  }
  {  // Rows no piece covers: named when they are needed, irrelevant otherwise.
    TempDir dir;
    save_rank_blocks(dir.path(), "model", 0, 2,
                     {{kTableA, {10, 8}, 0, 0, table_a().slice(0, 0, 5)}});
    save_rank_blocks(dir.path(), "model", 1, 2,
                     {{kTableA, {10, 8}, 5, 0, table_a().slice(0, 5, 9)},
                      {kTableB, {6, 4}, 0, 0, table_b().slice(1, 0, 2)}});
    const CheckpointTensorIndex index(dir.path());
    EXPECT_TRUE(torch::equal(index.read_block(kTableA, 2, 6, 0, 8), table_a().slice(0, 2, 8)));
    expect_error([&] { index.read_whole(kTableA); },
                 {kTableA, "rows [9, 10) x columns [0, 8)", "stored in no file", "incomplete"});
    expect_error([&] { index.read_block(kTableB, 1, 3, 1, 3); },
                 {kTableB, "rows [1, 4) x columns [2, 4)"});
  }
  {  // Pieces disagreeing on the global shape.
    TempDir dir;
    save_rank_blocks(dir.path(), "model", 0, 2,
                     {{kTableA, {10, 8}, 0, 0, table_a().slice(0, 0, 5)}});
    save_rank_blocks(dir.path(), "model", 1, 2,
                     {{kTableA, {12, 8}, 5, 0, table_a().slice(0, 5, 10)}});
    expect_error(
        [&] { CheckpointTensorIndex index(dir.path()); },
        {kTableA, "global shape [10, 8]", "[12, 8]", "model-000001-of-000002.safetensors"});
  }
  {  // Pieces disagreeing on the dtype (here a whole file against a block file).
    TempDir dir;
    save_safetensors(dir.file("model.safetensors"), {{kTableA, table_a()}});
    save_rank_blocks(dir.path(), "model", 0, 1,
                     {{kTableA, {10, 8}, 0, 0, table_a().slice(0, 0, 5).to(torch::kFloat64)}});
    expect_error(
        [&] { CheckpointTensorIndex index(dir.path()); },
        {kTableA, "F32", "F64", "model.safetensors", "model-000000-of-000001.safetensors"});
  }
  {  // Truncated file: the corrupt header is reported with the file name.
    TempDir dir;
    write_four_ranks(dir.path());
    fs::resize_file(dir.file("model-000001-of-000004.safetensors"), 5);
    expect_error([&] { CheckpointTensorIndex index(dir.path()); },
                 {dir.file("model-000001-of-000004.safetensors"), "truncated"});
    write_four_ranks(dir.path());
    const auto size = fs::file_size(dir.file("model-000001-of-000004.safetensors"));
    fs::resize_file(dir.file("model-000001-of-000004.safetensors"), size - 4);
    expect_error([&] { CheckpointTensorIndex index(dir.path()); },
                 {dir.file("model-000001-of-000004.safetensors"), "truncated"});
  }
  {  // Scalar copies that differ.
    TempDir dir;
    write_four_ranks(dir.path(), /*step_on_rank3=*/8);
    const CheckpointTensorIndex index(dir.path());
    expect_error([&] { index.read_whole(kStep); },
                 {kStep, "is 7 in", "but 8 in", "optimizer-000003-of-000004.safetensors"});
  }
  {  // Files of two world sizes; a renamed file; a foreign safetensors file named like a rank file.
    TempDir dir;
    write_four_ranks(dir.path());
    save_rank_blocks(dir.path(), "model", 0, 2, {});
    expect_error([&] { CheckpointTensorIndex index(dir.path()); },
                 {"different world sizes", "of 2", "of 4"});
    fs::remove(dir.file("model-000000-of-000002.safetensors"));
    fs::rename(dir.file("model-000000-of-000004.safetensors"), dir.file("tmp"));
    fs::rename(dir.file("model-000001-of-000004.safetensors"),
               dir.file("model-000000-of-000004.safetensors"));
    fs::rename(dir.file("tmp"), dir.file("model-000001-of-000004.safetensors"));
    expect_error([&] { CheckpointTensorIndex index(dir.path()); }, {"renamed", "rank 0 of 4"});
    save_safetensors(dir.file("model-000000-of-000004.safetensors"), {{"x", torch::ones({1})}});
    expect_error([&] { CheckpointTensorIndex index(dir.path()); },
                 {"__format__", "not a block file"});
  }
  expect_error([&] { CheckpointTensorIndex index("/nonexistent/ckpt"); },
               {"cannot list checkpoint directory /nonexistent/ckpt"});
}

TEST(ShardedCheckpoint, WriterErrors) {
  TempDir dir;
  const std::string path = dir.file("model-000000-of-000001.safetensors");
  expect_error([&] { save_rank_blocks(dir.path(), "model", 1, 1, {}); },
               {"rank 1 is outside [0, world_size 1)"});
  expect_error(
      [&] {
        save_rank_blocks(dir.path(), "model", 0, 1, {{"w", {4, 2}, 2, 0, torch::ones({3, 2})}});
      },
      {path, "tensor 'w' block at (2, 0)", "shape [3, 2]", "global shape [4, 2]"});
  expect_error(
      [&] {
        save_rank_blocks(dir.path(), "model", 0, 1, {{"w", {4}, 0, 1, torch::ones({4})}});
      },
      {"unused offsets must be 0"});
  expect_error(
      [&] {
        save_rank_blocks(dir.path(), "model", 0, 1, {{"w", {4, 2}, 0, 0, torch::ones({4})}});
      },
      {"same number of dims"});
  expect_error(
      [&] {
        save_rank_blocks(dir.path(), "model", 0, 1, {{"__format__", {}, 0, 0, torch::tensor(1)}});
      },
      {"reserved"});
  expect_error(
      [&] {
        save_rank_blocks(
            dir.path(), "model", 0, 1,
            {{"w", {4, 2}, 0, 0, torch::ones({2, 2})}, {"w", {4, 2}, 0, 0, torch::zeros({2, 2})}});
      },
      {"tensor 'w' block at (0, 0) is given twice"});
  expect_error(
      [&] {
        save_rank_blocks(
            dir.path(), "model", 0, 1,
            {{"w", {4, 2}, 0, 0, torch::ones({2, 2})}, {"w", {5, 2}, 2, 0, torch::zeros({2, 2})}});
      },
      {"tensor 'w'", "disagree on the global shape"});
  expect_error(
      [&] {
        save_rank_blocks(dir.path(), "model", 0, 1,
                         {{"w", {2}, 0, 0, torch::ones({2}, torch::kComplexFloat)}});
      },
      {"tensor 'w'", "cannot be stored"});
  EXPECT_FALSE(fs::exists(path));
}

// Only the bytes of the pieces overlapping a block are read: a BOOL table (the reader checks
// that every byte it reads is 0 or 1) with invalid bytes outside the requested rows reads fine.
TEST(ShardedCheckpoint, ReadsOnlyTheNeededBytes) {
  TempDir dir;
  const torch::Tensor flags = torch::tensor({1, 0, 1, 1, 0, 0, 1, 0}, torch::kBool).reshape({4, 2});
  save_rank_blocks(dir.path(), "model", 0, 1, {{"flags", {4, 2}, 0, 0, flags}});
  const std::string path = dir.file("model-000000-of-000001.safetensors");
  // Row 3 of the data (the last 2 bytes of the file) gets the invalid byte value 7.
  const auto size = fs::file_size(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 2));
    f.put(7);
  }
  const CheckpointTensorIndex index(dir.path());
  EXPECT_TRUE(torch::equal(index.read_block("flags", 0, 3, 0, 2), flags.slice(0, 0, 3)));
  expect_error([&] { index.read_whole("flags"); }, {path, "'flags'", "element 6 has byte value 7"});
}

// The number of bytes this thread read through read()/pread(), from /proc (-1 if unavailable).
int64_t bytes_read_by_thread() {
  std::ifstream in("/proc/thread-self/io");
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "rchar:") return value;
  }
  return -1;
}

// A 1M-row table (a 64 MiB sparse file): the index reads the header, a block reads its rows.
TEST(ShardedCheckpoint, LargeTableBlockReadsOnlyItsBytes) {
  if (bytes_read_by_thread() < 0) GTEST_SKIP() << "/proc/thread-self/io not available";
  TempDir dir;
  const int64_t rows = 1 << 20;
  const int64_t cols = 16;
  const std::string path = dir.file("model-000000-of-000001.safetensors");
  const std::string meta = R"({"name":"big","global_shape":[1048576,16],"offsets":[0,0]})";
  nlohmann::json header;
  header["big"] = {
      {"dtype", "F32"}, {"shape", {rows, cols}}, {"data_offsets", {0, rows * cols * 4}}};
  header["__metadata__"] = {
      {"big", meta},
      {"__format__", R"({"format":"tzrec.tensor_blocks","version":1,"rank":0,"world_size":1})"}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t data_start = 8 + text.size();
  {
    std::string len(8, '\0');
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
    std::ofstream out(path, std::ios::binary);
    out << len << text;
  }
  fs::resize_file(path, data_start + rows * cols * 4);  // zeros, not stored on disk
  // Rows 700000..700004 hold r * 100 + c.
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const torch::Tensor expected =
      torch::arange(5, torch::kFloat32).unsqueeze(1) * 100 + torch::arange(16, torch::kFloat32);
  ASSERT_EQ(
      ::pwrite(fd, expected.data_ptr(), 5 * 16 * 4, static_cast<off_t>(data_start + 700000 * 64)),
      5 * 16 * 4);
  ::close(fd);

  const int64_t before = bytes_read_by_thread();
  const CheckpointTensorIndex index(dir.path());
  const int64_t after_index = bytes_read_by_thread();
  const torch::Tensor block = index.read_block("big", 699999, 7, 4, 8);
  const int64_t after_block = bytes_read_by_thread();
  EXPECT_LT(after_index - before, 4096) << "the index read more than the header";
  // 7 rows x 64 bytes at most (column sub-range read in whole-row chunks) plus the /proc read.
  EXPECT_LT(after_block - after_index, 7 * 64 + 1024);
  ASSERT_EQ(block.sizes(), (std::vector<int64_t>{7, 8}));
  EXPECT_TRUE(torch::equal(block[0], torch::zeros({8})));
  EXPECT_TRUE(torch::equal(block.slice(0, 1, 6), expected.slice(1, 4, 12)));
  EXPECT_EQ(block[5][0].item<float>(), 404.0f);
  EXPECT_TRUE(torch::equal(block[6], torch::zeros({8})));
}

}  // namespace sharded_checkpoint_test
}  // namespace tzrec::checkpointing
