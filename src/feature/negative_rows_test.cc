// Negative sampling of batches and data group __NEG__ (feature/negative_rows.h, data_groups.h,
// FeatureParser with neg_rows; docs/tzrec-compatibility.md §6.5). Expected values by hand: a
// 10-item table whose item i has attributes "i:10i"; negative_sampler rejects the batch's item ids
// (TorchEasyRec's graphlearn node_weight sampler), so with plenty of other items every negative is
// outside the batch, and each negative's attributes are its table row's.
#include "feature/negative_rows.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data/testing_util.h"
#include "feature/batch_loader.h"
#include "feature/data_groups.h"
#include "feature/feature_parser.h"
#include "feature/feature_registry.h"
#include "feature/features.h"
#include "feature/testing_config.h"
#include "feature/testing_tensors.h"

namespace tzrec::feature {
namespace negative_rows_test {

namespace fs = std::filesystem;
using testing::Ids;
using testing::ids_of;
using testing::make_batch;
using testing::parse_config;

class NegativeRowsTest : public ::testing::Test {
 public:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tzrec_negative_rows_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream items(dir_ / "item.txt");
    items << "id:int64\tweight:float\tattrs:string\n";
    for (int i = 1; i <= 10; ++i) items << i << "\t1\t" << i << ":" << i * 10 << "\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string config(const std::string& extra_features = "") const {
    return "data_config { batch_size: 4 dataset_type: CsvDataset with_header: true label_fields: 'clk' "
           "negative_sampler { input_path: '" +
           (dir_ / "item.txt").string() +
           "' num_sample: 3 attr_fields: ['item_id', 'cate'] item_id_field: 'item_id' } } "
           "feature_configs { id_feature { feature_name: 'user_id' expression: 'user:user_id' num_buckets: 100 embedding_dim: 4 } } "
           "feature_configs { id_feature { feature_name: 'item_id' expression: 'item:item_id' num_buckets: 100 embedding_dim: 4 } } "
           "feature_configs { id_feature { feature_name: 'cate' expression: 'item:cate' num_buckets: 200 embedding_dim: 4 } } " +
           extra_features;
  }
  fs::path dir_;
};

// The NotSupportedError of building the features of config() with `feature` added, under FG_NORMAL.
std::string refusal(const NegativeRowsTest& t, const std::string& feature) {
  std::string fg = t.config(feature);
  fg.replace(fg.find("data_config {"), 13, "data_config { fg_mode: FG_NORMAL");
  return data::testing::error_of<NotSupportedError>([&] { build_features(parse_config(fg)); });
}

TEST_F(NegativeRowsTest, ItemFeaturesFormTheNegGroup) {
  const FeatureSet set = build_features(parse_config(config()));
  EXPECT_EQ(set.neg, (std::vector<bool>{false, true, true}));
  // A feature crossing item attributes with other inputs is refused (TorchEasyRec's
  // cross-negative group).
  const std::string mixed = refusal(*this,
                                    "feature_configs { combo_feature { feature_name: 'x' expression: ['user:user_id', "
                                    "'item:item_id'] hash_bucket_size: 10 embedding_dim: 4 } } ");
  EXPECT_NE(mixed.find("feature_configs[3].combo_feature (feature x) reading the sampled items' "
                       "data_config.negative_sampler.attr_fields (item_id) together with other inputs (user_id)"),
            std::string::npos)
      << mixed;
  // A cross type (combo, lookup, ...) over attr_fields only is in TorchEasyRec's __CNEG__ group
  // (tzrec/features/combo_feature.py, is_neg setter), not __NEG__: refused, not parsed as __NEG__.
  const std::string cross = refusal(*this,
                                    "feature_configs { combo_feature { feature_name: 'x' expression: ['item:item_id', "
                                    "'item:cate'] hash_bucket_size: 10 embedding_dim: 4 } } ");
  EXPECT_NE(cross.find("feature_configs[3].combo_feature (feature x) reading the sampled items' "
                       "data_config.negative_sampler.attr_fields (item_id, cate): TorchEasyRec puts a combo_feature "
                       "over negatives in its cross-negative data group __CNEG__"),
            std::string::npos)
      << cross;
}

TEST_F(NegativeRowsTest, NegativesFollowTheBatchRows) {
  const auto cfg = parse_config(config());
  const FeatureParser parser(cfg, /*read_labels=*/true, HashKind::kStdHash);
  auto sampler_config = data::negative_sampler_config(cfg.data_config());
  ASSERT_TRUE(sampler_config.has_value());
  const NegativeRows rows(data::NegativeSampler::create(*sampler_config, true), parser.neg_input_columns(), "\x1d", 0, 0);
  EXPECT_EQ(rows.id_columns(), (std::vector<std::string>{"item_id"}));
  data::RecordBatch batch = make_batch({{"user_id", {"7", "8", "9", "7"}},
                                        {"item_id", {"1", "2", "3", "4"}},
                                        {"cate", {"10", "20", "30", "40"}},
                                        {"clk", {"1", "0", "1", "0"}}});
  torch::Tensor hard;
  const data::RecordBatch neg = rows.sample(batch, &hard);
  EXPECT_FALSE(hard.defined());
  ASSERT_EQ(neg.num_rows(), 7);
  const sparse::Batch b = parser.parse_in_place(&batch, &neg);
  EXPECT_EQ(b.batch_size, 4);
  EXPECT_EQ(b.neg_batch_size, 7);
  EXPECT_EQ(b.sparse_features.keys(), (std::vector<std::string>{"user_id"}));
  EXPECT_EQ(b.neg_sparse_features.keys(), (std::vector<std::string>{"item_id", "cate"}));
  const Ids items = ids_of(b.neg_sparse_features["item_id"].values);
  const Ids cates = ids_of(b.neg_sparse_features["cate"].values);
  ASSERT_EQ(items.size(), 7u);
  EXPECT_EQ(Ids(items.begin(), items.begin() + 4), (Ids{1, 2, 3, 4}));
  EXPECT_EQ(Ids(cates.begin(), cates.begin() + 4), (Ids{10, 20, 30, 40}));
  for (size_t k = 4; k < 7; ++k) {
    EXPECT_GE(items[k], 5) << "negative " << k << " is one of the batch's items";
    EXPECT_LE(items[k], 10);
    EXPECT_EQ(cates[k], items[k] * 10) << "negative " << k << " carries another item's attributes";
  }
  // The same batch gets the same negatives (the stream is keyed by its first row).
  const data::RecordBatch again = rows.sample(batch, &hard);
  for (int64_t k = 0; k < again.num_rows(); ++k) EXPECT_EQ(again.columns[0].cell(k), neg.columns[0].cell(k));
}

// The stream is keyed by (seed, rank, the first row's file name, folder name and line): a copy of
// the data in another folder draws the same negatives, another seed others.
TEST_F(NegativeRowsTest, NegativesFollowTheSeedNotTheDataLocation) {
  const auto cfg = parse_config(config());
  const FeatureParser parser(cfg, /*read_labels=*/true, HashKind::kStdHash);
  const auto sampler = data::NegativeSampler::create(*data::negative_sampler_config(cfg.data_config()), true);
  auto negatives = [&](uint64_t seed, const std::string& file) {
    const NegativeRows rows(sampler, parser.neg_input_columns(), "\x1d", 0, seed);
    data::RecordBatch batch = make_batch({{"item_id", {"1", "2", "3", "4"}}, {"cate", {"10", "20", "30", "40"}}});
    batch.files = {file};
    torch::Tensor hard;
    const data::RecordBatch neg = rows.sample(batch, &hard);
    std::vector<std::string> items;
    for (int64_t k = 4; k < neg.num_rows(); ++k) items.emplace_back(neg.columns[0].cell(k));
    return items;
  };
  const auto base = negatives(0, "/data/a/dt=1/part-0.csv");
  ASSERT_EQ(base.size(), 3u);
  EXPECT_EQ(negatives(0, "/elsewhere/dt=1/part-0.csv"), base);
  bool seed_changes = false;
  for (uint64_t seed = 1; seed <= 4; ++seed) seed_changes |= negatives(seed, "/data/a/dt=1/part-0.csv") != base;
  EXPECT_TRUE(seed_changes) << "seeds 1-4 drew the negatives of seed 0";
  bool file_changes = false;
  for (int part = 1; part <= 4; ++part) {
    file_changes |= negatives(0, "/data/a/dt=1/part-" + std::to_string(part) + ".csv") != base;
  }
  EXPECT_TRUE(file_changes) << "other files drew the negatives of part-0";
}

// data_config.force_base_data_group (TorchEasyRec's pad_to_max_bs): every feature joins __BASE__
// over the batch's rows followed by the negatives'; the user's bags of the negatives' rows are
// empty.
TEST_F(NegativeRowsTest, ForceBaseDataGroupPadsTheBatchFeatures) {
  std::string text = config();
  text.replace(text.find("data_config {"), 13, "data_config { force_base_data_group: true");
  const auto cfg = parse_config(text);
  const FeatureParser parser(cfg, /*read_labels=*/true, HashKind::kStdHash);
  const NegativeRows rows(data::NegativeSampler::create(*data::negative_sampler_config(cfg.data_config()), true),
                          parser.neg_input_columns(), "\x1d", 0, 0);
  data::RecordBatch batch = make_batch({{"user_id", {"7", "8", "9", "7"}},
                                        {"item_id", {"1", "2", "3", "4"}},
                                        {"cate", {"10", "20", "30", "40"}},
                                        {"clk", {"1", "0", "1", "0"}}});
  torch::Tensor hard;
  const data::RecordBatch neg = rows.sample(batch, &hard);
  const sparse::Batch b = parser.parse_in_place(&batch, &neg);
  EXPECT_EQ(b.batch_size, 4);
  EXPECT_EQ(b.base_rows(), 7);
  EXPECT_EQ(b.to(torch::kCPU).base_rows(), 7);  // the flag travels with the batch
  EXPECT_EQ(b.labels.at("clk").size(0), 4);
  EXPECT_EQ(b.sparse_features.keys(), (std::vector<std::string>{"user_id", "item_id", "cate"}));
  EXPECT_TRUE(b.neg_sparse_features.empty());
  EXPECT_EQ(ids_of(b.sparse_features["user_id"].lengths), (Ids{1, 1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(ids_of(b.sparse_features["user_id"].values), (Ids{7, 8, 9, 7}));
  const Ids items = ids_of(b.sparse_features["item_id"].values);
  ASSERT_EQ(items.size(), 7u);
  EXPECT_EQ(Ids(items.begin(), items.begin() + 4), (Ids{1, 2, 3, 4}));
  // The model side sees one data group.
  for (const FeatureInfo& f : build_feature_infos(cfg)) {
    EXPECT_FALSE(f.neg) << f.name;
    EXPECT_EQ(f.sampled, f.name != "user_id") << f.name;
  }
}

TEST_F(NegativeRowsTest, LoaderAppendsNegativesToEveryTrainingBatch) {
  {
    std::ofstream csv(dir_ / "train.csv");
    csv << "user_id,item_id,cate,clk\n";
    for (int r = 0; r < 8; ++r) csv << r << "," << (r % 4 + 1) << "," << (r % 4 + 1) * 10 << "," << r % 2 << "\n";
  }
  const auto cfg = parse_config(config());
  BatchLoader train(cfg, (dir_ / "train.csv").string(), Mode::kTrain);
  int batches = 0;
  while (auto b = train.next()) {
    EXPECT_EQ(b->batch.batch_size, 4);
    EXPECT_EQ(b->batch.neg_batch_size, 7);
    ++batches;
  }
  EXPECT_EQ(batches, 2);
  // Predict runs no sampler: the item features cover the batch's rows only.
  BatchLoader predict(cfg, (dir_ / "train.csv").string(), Mode::kPredict);
  auto p = predict.next();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->batch.neg_batch_size, 4);
}

TEST_F(NegativeRowsTest, BadIdsNameTheRow) {
  const auto cfg = parse_config(config());
  const FeatureParser parser(cfg, true, HashKind::kStdHash);
  const NegativeRows rows(data::NegativeSampler::create(*data::negative_sampler_config(cfg.data_config()), true),
                          parser.neg_input_columns(), "\x1d", 0, 0);
  data::RecordBatch batch = make_batch({{"item_id", {"1", "x2"}}, {"cate", {"10", "20"}}});
  torch::Tensor hard;
  try {
    rows.sample(batch, &hard);
    ADD_FAILURE() << "a text id was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv line 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("id 'x2' is not an integer"), std::string::npos) << e.what();
  }
}

// A sampler over a grouped sequence's items (data_groups.h, CandidateSequence; TorchEasyRec's
// hstu_match layout): every row's items are positives, and the negatives are appended to the
// batch's last row of that sequence, past its sequence_length (which cuts only the rows' own
// items), with Batch::candidate_pos_lengths the rows' own item counts.
TEST_F(NegativeRowsTest, CandidateSequenceNegativesJoinTheLastRow) {
  const std::string text =
      "data_config { batch_size: 4 dataset_type: CsvDataset with_header: true fg_mode: FG_DAG label_fields: 'clk' "
      "negative_sampler { input_path: '" +
      (dir_ / "item.txt").string() +
      "' num_sample: 3 attr_fields: ['video_id', 'cate'] item_id_field: 'cand_seq__video_id' } } "
      "feature_configs { id_feature { feature_name: 'user_id' expression: 'user:user_id' num_buckets: 100 "
      "embedding_dim: 4 } } "
      "feature_configs { sequence_feature { sequence_name: 'cand_seq' sequence_length: 2 sequence_delim: '|' "
      "features { id_feature { feature_name: 'video_id' expression: 'item:video_id' num_buckets: 100 "
      "embedding_dim: 4 } } "
      "features { id_feature { feature_name: 'cate' expression: 'item:cate' num_buckets: 200 embedding_dim: 4 } } "
      "} } ";
  const auto cfg = parse_config(text);
  const FeatureParser parser(cfg, /*read_labels=*/true, HashKind::kStdHash);
  ASSERT_TRUE(parser.candidate().has_value());
  EXPECT_EQ(parser.candidate()->name, "cand_seq");
  EXPECT_EQ(parser.neg_input_columns(), (std::vector<std::string>{"cand_seq__video_id", "cand_seq__cate"}));
  const FeatureSet set = build_features(cfg);
  EXPECT_EQ(set.neg, (std::vector<bool>{false, false, false}));  // no __NEG__ group
  const NegativeRows rows(data::NegativeSampler::create(*data::negative_sampler_config(cfg.data_config()), true),
                          parser.neg_input_columns(), "\x1d", 0, 0, parser.candidate());
  data::RecordBatch batch = make_batch({{"user_id", {"7", "8", "9"}},
                                        {"cand_seq__video_id", {"1|2", "3", "4|5|6"}},
                                        {"cand_seq__cate", {"10|20", "30", "40|50|60"}},
                                        {"clk", {"1", "0", "1"}}});
  torch::Tensor hard;
  const data::RecordBatch neg = rows.sample(batch, &hard);
  ASSERT_EQ(neg.num_rows(), 3);  // the negatives' rows only
  EXPECT_EQ(neg.columns[0].name, "cand_seq__video_id");
  const sparse::Batch b = parser.parse_in_place(&batch, &neg);
  EXPECT_EQ(b.batch_size, 3);
  EXPECT_EQ(ids_of(b.candidate_pos_lengths), (Ids{2, 1, 2}));  // row 3 cut to sequence_length 2
  EXPECT_EQ(ids_of(b.sequence_lengths.at("cand_seq__video_id")), (Ids{2, 1, 5}));
  EXPECT_EQ(ids_of(b.sequence_lengths.at("cand_seq__cate")), (Ids{2, 1, 5}));
  EXPECT_EQ(ids_of(b.sparse_features["cand_seq__video_id"].lengths), (Ids{2, 1, 5}));
  const Ids items = ids_of(b.sparse_features["cand_seq__video_id"].values);
  const Ids cates = ids_of(b.sparse_features["cand_seq__cate"].values);
  ASSERT_EQ(items.size(), 8u);
  EXPECT_EQ(Ids(items.begin(), items.begin() + 5), (Ids{1, 2, 3, 4, 5}));
  EXPECT_EQ(Ids(cates.begin(), cates.begin() + 5), (Ids{10, 20, 30, 40, 50}));
  for (size_t k = 5; k < 8; ++k) {
    // (Six of the ten items are the batch's: the sampler's retry limit may let one through.)
    EXPECT_GE(items[k], 1);
    EXPECT_LE(items[k], 10);
    EXPECT_EQ(cates[k], items[k] * 10) << "negative " << k << " carries another item's attributes";
  }
  EXPECT_EQ(ids_of(b.sparse_features["user_id"].values), (Ids{7, 8, 9}));  // the user side is untouched
}

TEST_F(NegativeRowsTest, CandidateSequenceFeaturesReadTheSampledColumns) {
  // A sub-feature of the candidate sequence reading a column the sampler does not provide.
  const std::string text =
      "data_config { fg_mode: FG_DAG label_fields: 'clk' negative_sampler { input_path: '" + (dir_ / "item.txt").string() +
      "' num_sample: 3 attr_fields: ['video_id'] item_id_field: 'cand_seq__video_id' } } "
      "feature_configs { sequence_feature { sequence_name: 'cand_seq' sequence_length: 2 sequence_delim: '|' "
      "features { id_feature { feature_name: 'video_id' expression: 'item:video_id' num_buckets: 100 "
      "embedding_dim: 4 } } "
      "features { id_feature { feature_name: 'cate' expression: 'item:cate' num_buckets: 200 embedding_dim: 4 } } "
      "} } ";
  try {
    build_features(parse_config(text));
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(feature cand_seq__cate): the candidate sequence 'cand_seq' gets its "
                                         "negatives from data_config.negative_sampler (item_id_field "
                                         "cand_seq__video_id), which provides only the columns cand_seq__video_id; "
                                         "add 'cate' (without the 'cand_seq__' prefix) to attr_fields"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace negative_rows_test
}  // namespace tzrec::feature
