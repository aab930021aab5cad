#include "checkpoint/checkpoint.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "data/testing_util.h"
#include "checkpoint/safetensors.h"

namespace tzrec::checkpointing {
namespace checkpoint_test {

namespace fs = std::filesystem;
using nlohmann::json;

using data::testing::read_file;
using data::testing::TempDir;
using data::testing::write_file;



std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

CheckpointData sample_data(int64_t step, float fill = 0.0f) {
  torch::manual_seed(step);
  CheckpointData d;
  d.step = step;
  d.model["embedding_group.ebc.embedding_bags.cat_0_emb.weight"] = torch::randn({10, 4}) + fill;
  d.model["deep_mlp.mlp.0.perceptron.0.weight"] = torch::randn({8, 3}, torch::requires_grad());
  d.model["bn.num_batches_tracked"] = torch::tensor(int64_t{12});
  d.optimizer["sparse.cat_0_emb.momentum1"] = torch::rand({10, 4});
  d.optimizer["dense.deep_mlp.mlp.0.perceptron.0.weight.exp_avg"] = torch::randn({8, 3});
  d.optimizer["dense.step"] = torch::tensor(double(step));
  d.dataloader_state = {{"__epochs_completed__", 1}, {"train", {{"file", 0}, {"row", 4096}}}};
  d.config_digest = digest_text("model_dir: \"x\"\n");
  return d;
}

void expect_same(const std::map<std::string, torch::Tensor>& a,
                 const std::map<std::string, torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_EQ(b.at(name).scalar_type(), t.scalar_type()) << name;
    EXPECT_TRUE(torch::equal(b.at(name), t.detach())) << name;
  }
}

template <typename Fn>
std::string checkpoint_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected CheckpointError";
  return "";
}

TEST(Checkpoint, Sha256Vectors) {
  // FIPS 180-2 examples (one block, two-block padding, many blocks).
  EXPECT_EQ(digest_text(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest_text("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest_text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(digest_text(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Checkpoint, RoundTripAndLayout) {
  TempDir tmp;
  const std::string model_dir = tmp.file("model_dir");  // created by save_checkpoint
  const CheckpointData d = sample_data(40);
  save_checkpoint(model_dir, d);
  const std::string ckpt = checkpoint_dir(model_dir, 40);
  EXPECT_EQ(ckpt, model_dir + "/model.ckpt-40");
  EXPECT_EQ(dir_entries(model_dir), std::vector<std::string>{"model.ckpt-40"});
  EXPECT_EQ(dir_entries(ckpt),
            (std::vector<std::string>{"dataloader_state.json", "manifest.json", "model.safetensors",
                                      "optimizer.safetensors"}));
  const json manifest = json::parse(read_file(ckpt + "/manifest.json"));
  EXPECT_EQ(manifest["format_version"], 1);
  EXPECT_EQ(manifest["step"], 40);
  EXPECT_EQ(manifest["config_digest"], d.config_digest);
  EXPECT_TRUE(manifest["tzrec_version"].is_string());
  ASSERT_EQ(manifest["parameters"].size(), 3u);
  EXPECT_EQ(
      manifest["parameters"][1],
      json({{"name", "deep_mlp.mlp.0.perceptron.0.weight"}, {"shape", {8, 3}}, {"dtype", "F32"}}));
  EXPECT_EQ(manifest["optimizer_state"].size(), 3u);
  // The tensor files are plain safetensors.
  EXPECT_EQ(load_safetensors(ckpt + "/model.safetensors").tensors.size(), 3u);

  const CheckpointData l = load_checkpoint(ckpt);
  EXPECT_EQ(l.step, 40);
  EXPECT_EQ(l.config_digest, d.config_digest);
  EXPECT_EQ(l.dataloader_state, d.dataloader_state);
  expect_same(d.model, l.model);
  expect_same(d.optimizer, l.optimizer);
}

TEST(Checkpoint, NullDataloaderStateAndEmptyOptimizer) {
  TempDir tmp;
  CheckpointData d;
  d.step = 0;
  d.model["w"] = torch::ones({2});
  save_checkpoint(tmp.path(), d);
  const auto l = load_checkpoint(checkpoint_dir(tmp.path(), 0));
  EXPECT_TRUE(l.dataloader_state.is_null());
  EXPECT_TRUE(l.optimizer.empty());
  EXPECT_EQ(l.config_digest, "");
}

TEST(Checkpoint, ListAndLatest) {
  TempDir tmp;
  const std::string md = tmp.path();
  EXPECT_FALSE(latest_checkpoint(md).has_value());
  EXPECT_FALSE(latest_checkpoint(tmp.file("does_not_exist")).has_value());
  EXPECT_TRUE(list_checkpoints(tmp.file("does_not_exist")).empty());
  for (int64_t step : {100, 5, 20}) save_checkpoint(md, sample_data(step));
  // Entries that are not checkpoints.
  fs::create_directory(tmp.file("model.ckpt-abc"));
  fs::create_directory(tmp.file("model.ckpt-"));
  fs::create_directory(tmp.file("model.ckpt-12x"));
  fs::create_directory(tmp.file(".model.ckpt-500.tmp-1"));
  fs::create_directory(tmp.file("eval_val"));
  write_file(tmp.file("model.ckpt-300"), "a file, not a directory");
  write_file(tmp.file("pipeline.config"), "");

  const auto all = list_checkpoints(md);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], std::make_pair(md + "/model.ckpt-5", int64_t{5}));
  EXPECT_EQ(all[1], std::make_pair(md + "/model.ckpt-20", int64_t{20}));
  EXPECT_EQ(all[2],
            std::make_pair(md + "/model.ckpt-100", int64_t{100}));  // numeric, not lexicographic
  EXPECT_EQ(latest_checkpoint(md), all[2]);
  EXPECT_EQ(latest_checkpoint(md + "/"), all[2]);
  // A checkpoint path is used as-is.
  EXPECT_EQ(latest_checkpoint(md + "/model.ckpt-20"), all[1]);
  EXPECT_EQ(latest_checkpoint(md + "/model.ckpt-20/")->second, 20);
  EXPECT_EQ(latest_checkpoint(md + "/model.ckpt-abc"),
            std::make_pair(md + "/model.ckpt-abc", int64_t{0}));
  // A directory that itself holds a checkpoint (no model.ckpt-* inside): its manifest step.
  fs::copy(md + "/model.ckpt-20", tmp.file("copied"), fs::copy_options::recursive);
  EXPECT_EQ(latest_checkpoint(tmp.file("copied")), std::make_pair(tmp.file("copied"), int64_t{20}));
  EXPECT_FALSE(latest_checkpoint(tmp.file("eval_val")).has_value());
}

TEST(Checkpoint, OverwriteSameStepIsAtomicReplace) {
  TempDir tmp;
  const CheckpointData first = sample_data(7, 0.0f);
  save_checkpoint(tmp.path(), first);
  CheckpointData second = sample_data(7, 100.0f);
  second.model.erase("bn.num_batches_tracked");
  second.dataloader_state = nullptr;
  save_checkpoint(tmp.path(), second);
  EXPECT_EQ(dir_entries(tmp.path()),
            std::vector<std::string>{"model.ckpt-7"});  // nothing left over
  const auto l = load_checkpoint(checkpoint_dir(tmp.path(), 7));
  expect_same(second.model, l.model);
  EXPECT_TRUE(l.dataloader_state.is_null());

  // A failing save leaves the existing checkpoint untouched and no temporary directory behind.
  CheckpointData bad = sample_data(7, 5.0f);
  bad.model["complex"] = torch::ones({2}, torch::kComplexFloat);
  EXPECT_THROW(save_checkpoint(tmp.path(), bad), CheckpointError);
  EXPECT_EQ(dir_entries(tmp.path()), std::vector<std::string>{"model.ckpt-7"});
  expect_same(second.model, load_checkpoint(checkpoint_dir(tmp.path(), 7)).model);
}

TEST(Checkpoint, RestoreTensorsCopiesInPlace) {
  const CheckpointData d = sample_data(3);
  auto w = torch::zeros({8, 3}, torch::requires_grad());
  auto emb = torch::zeros({10, 4});
  auto count = torch::zeros({}, torch::kInt64);
  const auto emb_storage = emb.data_ptr();
  restore_tensors(d.model,
                  {{"deep_mlp.mlp.0.perceptron.0.weight", w},
                   {"embedding_group.ebc.embedding_bags.cat_0_emb.weight", emb},
                   {"bn.num_batches_tracked", count}},
                  "model");
  EXPECT_TRUE(torch::equal(w.detach(), d.model.at("deep_mlp.mlp.0.perceptron.0.weight").detach()));
  EXPECT_TRUE(torch::equal(emb, d.model.at("embedding_group.ebc.embedding_bags.cat_0_emb.weight")));
  EXPECT_EQ(count.item<int64_t>(), 12);
  EXPECT_EQ(emb.data_ptr(), emb_storage);
  EXPECT_TRUE(w.requires_grad());
  // Extra stored keys are fine with allow_extra.
  auto only_w = torch::zeros({8, 3});
  restore_tensors(d.model, {{"deep_mlp.mlp.0.perceptron.0.weight", only_w}}, "model",
                  /*allow_extra=*/true);
  EXPECT_TRUE(torch::equal(only_w, d.model.at("deep_mlp.mlp.0.perceptron.0.weight").detach()));
}

TEST(Checkpoint, RestoreTensorsErrors) {
  const std::map<std::string, torch::Tensor> stored = {{"a", torch::ones({2, 3})},
                                                       {"b", torch::ones({4})}};
  auto a = torch::zeros({2, 3});
  auto b = torch::zeros({4});

  std::string msg = checkpoint_error_of([&] {
    restore_tensors(stored, {{"a", a}, {"b", b}, {"c", torch::zeros({5, 6})}}, "model");
  });
  EXPECT_NE(msg.find("'c' (expected shape [5, 6] F32) is missing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model state"), std::string::npos) << msg;

  auto wrong_shape = torch::zeros({3, 2});
  msg = checkpoint_error_of([&] {
    restore_tensors(stored, {{"a", wrong_shape}, {"b", b}}, "model");
  });
  EXPECT_NE(msg.find("'a': expected shape [3, 2] F32, found [2, 3] F32"), std::string::npos) << msg;

  auto wrong_dtype = torch::zeros({4}, torch::kFloat64);
  msg = checkpoint_error_of([&] {
    restore_tensors(stored, {{"a", a}, {"b", wrong_dtype}}, "optimizer");
  });
  EXPECT_NE(msg.find("'b': expected shape [4] F64, found [4] F32"), std::string::npos) << msg;
  EXPECT_NE(msg.find("optimizer state"), std::string::npos) << msg;

  msg = checkpoint_error_of([&] { restore_tensors(stored, {{"a", a}}, "model"); });
  EXPECT_NE(msg.find("'b' (shape [4]) is in the checkpoint but not in the model"),
            std::string::npos)
      << msg;

  // Nothing was copied by any failing call.
  EXPECT_EQ(a.sum().item<float>(), 0.0f);
  EXPECT_EQ(b.sum().item<float>(), 0.0f);
  EXPECT_EQ(wrong_shape.sum().item<float>(), 0.0f);
}

TEST(Checkpoint, LoadErrorsNameTheFile) {
  TempDir tmp;
  std::string msg = checkpoint_error_of([&] { load_checkpoint(tmp.file("nope")); });
  EXPECT_NE(msg.find(tmp.file("nope") + " does not exist"), std::string::npos) << msg;

  fs::create_directories(tmp.file("empty/model.ckpt-3"));
  msg = checkpoint_error_of([&] { load_checkpoint(tmp.file("empty/model.ckpt-3")); });
  EXPECT_NE(msg.find("missing manifest.json"), std::string::npos) << msg;

  fs::create_directories(tmp.file("dcp/model.ckpt-3/model"));
  msg = checkpoint_error_of([&] { load_checkpoint(tmp.file("dcp/model.ckpt-3")); });
  EXPECT_NE(msg.find("PyTorch TorchEasyRec checkpoint"), std::string::npos) << msg;

  const std::string md = tmp.file("md");
  save_checkpoint(md, sample_data(9));
  const std::string ckpt = checkpoint_dir(md, 9);
  const std::string manifest_text = read_file(ckpt + "/manifest.json");

  write_file(ckpt + "/manifest.json", "{not json");
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find(ckpt + "/manifest.json: not a valid JSON object"), std::string::npos) << msg;

  json m = json::parse(manifest_text);
  m["format_version"] = 2;
  write_file(ckpt + "/manifest.json", m.dump());
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find("format_version 2 is not supported"), std::string::npos) << msg;

  m = json::parse(manifest_text);
  m.erase("step");
  write_file(ckpt + "/manifest.json", m.dump());
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find("\"step\" is missing"), std::string::npos) << msg;

  m = json::parse(manifest_text);
  m["parameters"][0]["shape"] = {11, 4};
  write_file(ckpt + "/manifest.json", m.dump());
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find("\"parameters\" does not match model.safetensors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'bn.num_batches_tracked' is listed as \"I64\" [11,4] but stored as I64 []"),
            std::string::npos)
      << msg;

  m = json::parse(manifest_text);
  m["optimizer_state"].erase(0);
  write_file(ckpt + "/manifest.json", m.dump());
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find("is stored but not listed"), std::string::npos) << msg;

  write_file(ckpt + "/manifest.json", manifest_text);
  write_file(ckpt + "/dataloader_state.json", "{\"a\": ");
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find(ckpt + "/dataloader_state.json: not valid JSON"), std::string::npos) << msg;

  fs::remove(ckpt + "/dataloader_state.json");  // optional: absent means null
  EXPECT_TRUE(load_checkpoint(ckpt).dataloader_state.is_null());

  fs::remove(ckpt + "/optimizer.safetensors");
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find("missing optimizer.safetensors"), std::string::npos) << msg;

  // A truncated tensor file reports the file.
  save_checkpoint(md, sample_data(9));
  const std::string model_file = ckpt + "/model.safetensors";
  fs::resize_file(model_file, fs::file_size(model_file) - 4);
  msg = checkpoint_error_of([&] { load_checkpoint(ckpt); });
  EXPECT_NE(msg.find(model_file), std::string::npos) << msg;
}

}  // namespace checkpoint_test
}  // namespace tzrec::checkpointing
