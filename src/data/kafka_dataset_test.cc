// KafkaDataset's pieces: the URI (TorchEasyRec's docs/source/feature/data.md KafkaDataset
// section and tzrec/datasets/kafka_dataset.py _parse_kafka_uri give the accepted forms), the
// stream read position, the partition spread, and the batch source against librdkafka's mock
// cluster (the real Kafka protocol, in process) with Arrow messages written by arrow/ipc_writer.
// Expected rows are the produced ones, counted by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "arrow/batch.h"
#include "arrow/ipc_writer.h"
#include "base/error.h"
#include "data/kafka_batch_source.h"
#include "data/kafka_dataset.h"
#include "data/kafka_mock_cluster.h"
#include "data/kafka_uri.h"
#include "data/rank_read_positions.h"
#include "data/read_position.h"
#include "data/testing_util.h"
#include "parquet/writer.h"

namespace tzrec::data {
namespace kafka_dataset_test {

using testing::error_of;

TEST(KafkaUri, ParsesTorchEasyRecForms) {
  const auto u = parse_kafka_uri(
      "kafka://broker:9092/topic?group.id=consumer_group&auto.offset.reset=earliest"
      "&start.timestamp.ms=1711929600000",
      "train_input_path");
  EXPECT_EQ(u.brokers, "broker:9092");
  EXPECT_EQ(u.topic, "topic");
  EXPECT_EQ(u.start_timestamp_ms, 1711929600000);
  EXPECT_EQ(u.params.at("group.id"), "consumer_group");
  EXPECT_EQ(u.params.at("auto.offset.reset"), "earliest");
  EXPECT_EQ(u.params.at("enable.auto.commit"), "false");  // the dataset's default
  EXPECT_EQ(u.params.at("bootstrap.servers"), "broker:9092");
  EXPECT_EQ(u.params.count("start.timestamp.ms"), 0u);  // not a librdkafka parameter
  EXPECT_FALSE(u.skip_malformed);  // malformed.messages defaults to fail
  const auto skip = parse_kafka_uri("kafka://b/t?group.id=g&malformed.messages=skip", "train_input_path");
  EXPECT_TRUE(skip.skip_malformed);
  EXPECT_EQ(skip.params.count("malformed.messages"), 0u);  // the dataset's own, not librdkafka's
  EXPECT_FALSE(parse_kafka_uri("kafka://b/t?group.id=g&malformed.messages=fail", "f").skip_malformed);
  // Datahub's form: several parameters, percent-encoded values, an explicit auto commit.
  const auto d = parse_kafka_uri(
      "kafka://dh.example.com:9092/proj.topic?group.id=proj.g&sasl.password=a%2Bb%3D&"
      "enable.auto.commit=true",
      "train_input_path");
  EXPECT_EQ(d.topic, "proj.topic");
  EXPECT_EQ(d.params.at("sasl.password"), "a+b=");
  EXPECT_EQ(d.params.at("enable.auto.commit"), "true");
  EXPECT_TRUE(is_kafka_uri("kafka://b/t?group.id=g"));
  EXPECT_FALSE(is_kafka_uri("data/train.parquet"));
}

TEST(KafkaUri, BadUrisNameTheFieldAndTheProblem) {
  auto err = [](const std::string& uri) {
    return error_of<ConfigError>([&] { parse_kafka_uri(uri, "train_input_path"); });
  };
  EXPECT_EQ(err("kafka:///t?group.id=g"),
            "train_input_path: 'kafka:///t?group.id=g': no broker; expected "
            "kafka://broker:9092/topic?group.id=g[&...]");
  EXPECT_NE(err("kafka://b:9092?group.id=g").find(": no topic;"), std::string::npos);
  EXPECT_NE(err("kafka://b:9092/t").find("no consumer group (add ?group.id=<group>)"), std::string::npos);
  EXPECT_NE(err("kafka://b/t?group.id=g&start.timestamp.ms=-5")
                .find("start.timestamp.ms must be a non-negative integer (milliseconds since the "
                      "Unix epoch), got '-5'"),
            std::string::npos);
  EXPECT_NE(err("kafka://b/t?group.id=g&start.timestamp.ms=12x").find("got '12x'"), std::string::npos);
  EXPECT_NE(err("kafka://b/t?group.id=g&oops").find("query item 'oops' is not name=value"),
            std::string::npos);
  EXPECT_NE(err("kafka://b/t?group.id=g&malformed.messages=ignore")
                .find("malformed.messages must be 'fail' or 'skip', got 'ignore'"),
            std::string::npos);
}

TEST(StreamPosition, AdvanceJsonAndResume) {
  ReadPosition p = ReadPosition::start_stream("events", 2);
  p.advance(0, {{0, 4}}, {{2, 7, 1}});
  p.advance(1, {{0, 4}}, {{1, 3, 0}, {3, 9, 2}});
  p.advance(0, {{0, 4}}, {{2, 8, 0}});
  ASSERT_EQ(p.partitions.size(), 3u);
  EXPECT_EQ(*p.partition_position(2), (PartitionPosition{2, 8, 0}));
  EXPECT_EQ(p.partition_position(0), nullptr);
  EXPECT_EQ(p.total_rows(), 12);
  const auto j = p.to_json();
  EXPECT_EQ(j.dump(),
            R"({"format":"kafka","next_worker":0,"num_workers":2,"partitions":[{"offset":3,"partition":1,"rows":0},{"offset":8,"partition":2,"rows":0},{"offset":9,"partition":3,"rows":2}],"topic":"events","worker_rows":[8,4]})");
  EXPECT_EQ(ReadPosition::from_json(j), p);
  // Another number of workers keeps every partition's position, restarts the round-robin.
  const ReadPosition three = p.for_workers(3);
  EXPECT_EQ(three.partitions, p.partitions);
  EXPECT_EQ(three.worker_rows, (std::vector<int64_t>{0, 0, 0}));

  auto bad = [&](const std::string& text) {
    return error_of<CheckpointError>([&] { ReadPosition::from_json(nlohmann::json::parse(text)); });
  };
  EXPECT_EQ(bad(R"({"format":"kafka","topic":"t","num_workers":1,"next_worker":0,"worker_rows":[0],"partitions":[{"partition":0,"offset":-1,"rows":0}]})"),
            "invalid data read position: partitions[0] must be {\"partition\": integer >= 0, "
            "\"offset\": integer >= 0, \"rows\": integer >= 0}, got {\"offset\":-1,\"partition\":0,\"rows\":0}");
  EXPECT_EQ(bad(R"({"format":"kafka","topic":"t","num_workers":1,"next_worker":0,"worker_rows":[0],"partitions":[{"partition":0,"offset":1,"rows":0},{"partition":0,"offset":2,"rows":0}]})"),
            "invalid data read position: partition 0 is listed twice");
  EXPECT_EQ(bad(R"({"format":"kafka","num_workers":1,"next_worker":0,"worker_rows":[0],"partitions":[]})"),
            "invalid data read position: missing field 'topic'");
}

TEST(StreamPosition, RanksMergeOnAnotherWorldSize) {
  // Two ranks read partitions {0, 2} and {1, 3}; one rank resumes all four where they stood.
  ReadPosition r0 = ReadPosition::start_stream("t", 1, 2), r1 = ReadPosition::start_stream("t", 1, 2);
  r0.advance(0, {{0, 8}}, {{0, 5, 0}, {2, 4, 3}});
  r1.advance(0, {{0, 8}}, {{1, 6, 1}, {3, 2, 0}});
  const ReadPosition one = position_for_rank({r0, r1}, 0, 1);
  ASSERT_EQ(one.partitions.size(), 4u);
  EXPECT_EQ(one.partitions[1], (PartitionPosition{1, 6, 1}));
  EXPECT_EQ(one.partitions[2], (PartitionPosition{2, 4, 3}));
  EXPECT_EQ(one.world_size, 1);
  // Same world size: each rank continues from its own position (and knows the others').
  EXPECT_EQ(position_for_rank({r0, r1}, 1, 2).worker_rows, r1.worker_rows);
  ReadPosition other = ReadPosition::start_stream("u", 1, 2);
  EXPECT_NE(error_of<CheckpointError>([&] { position_for_rank({r0, other}, 0, 1); }).find("topic 'u'"),
            std::string::npos);
}

TEST(KafkaDataset, PartitionsAreSpreadOverReaders) {
  EXPECT_EQ(partitions_of_reader(8, 1, 4), (std::vector<int32_t>{1, 5}));
  EXPECT_EQ(partitions_of_reader(5, 0, 2), (std::vector<int32_t>{0, 2, 4}));
  EXPECT_EQ(partitions_of_reader(2, 3, 4), (std::vector<int32_t>{}));
}

// ---- the batch source against librdkafka's mock cluster -------------------------------------

// A mock cluster of one broker with `topic` of `partitions` partitions; produce() writes Arrow
// IPC stream messages of an int64 column "id" and a string column "name".
class MockCluster {
 public:
  MockCluster(const std::string& topic, int partitions) : cluster_(topic, partitions) {}
  std::string bootstrap() const { return cluster_.bootstrap(); }

  // One message of rows id = first .. first + rows - 1, name = "n<id>", to `partition`.
  void produce(int32_t partition, int64_t first, int64_t rows, bool schemaless = false) {
    arrow::ArrowSchema schema = test_schema();
    arrow::ArrowBatch batch;
    batch.num_rows = rows;
    batch.columns = arrow::empty_columns(schema);
    parquet::ColumnBuilder id(batch.columns[0].values.descriptor), name(batch.columns[1].values.descriptor);
    for (int64_t i = first; i < first + rows; ++i) {
      id.append(i);
      name.append_string("n" + std::to_string(i));
    }
    batch.columns[0].values = id.finish();
    batch.columns[1].values = name.finish();
    produce_raw(partition, schemaless ? arrow::write_record_batch_message(schema, batch)
                                      : arrow::write_ipc_stream(schema, {batch}));
  }
  void produce_raw(int32_t partition, const std::string& payload) {
    cluster_.produce(partition, payload);
    cluster_.flush();
  }
  static arrow::ArrowSchema test_schema() {
    arrow::ArrowSchema schema;
    schema.fields.emplace_back("id", arrow::ArrowType(arrow::TypeId::kInt64), false);
    schema.fields.emplace_back("name", arrow::ArrowType(arrow::TypeId::kUtf8), false);
    return schema;
  }

 private:
  KafkaMockCluster cluster_;
};

KafkaUri test_uri(const MockCluster& cluster, const std::string& topic) {
  return parse_kafka_uri("kafka://" + cluster.bootstrap() + "/" + topic +
                             "?group.id=g&auto.offset.reset=earliest",
                         "train_input_path");
}

std::unique_ptr<KafkaBatchSource> make_source(const KafkaUri& uri, std::vector<int32_t> partitions,
                                              const ReadPosition& start, int64_t batch_size,
                                              std::optional<arrow::ArrowSchema> input_schema = {}) {
  KafkaSourceOptions options;
  options.uri = uri;
  options.columns = {"name", "id"};
  options.batch_size = batch_size;
  options.input_schema = std::move(input_schema);
  return std::make_unique<KafkaBatchSource>(options, std::make_unique<KafkaConsumer>(uri, "test"),
                                            std::move(partitions), start, "test");
}

std::vector<int64_t> ids_of(const SourcedBatch& b) {
  const TypedColumn* id = b.records.typed_column("id");
  std::vector<int64_t> out(id->values.data<int64_t>(), id->values.data<int64_t>() + id->values.num_rows);
  return out;
}

TEST(KafkaBatchSource, CutsMessagesIntoBatchesAndResumesInsideAMessage) {
  MockCluster cluster("events", 1);
  cluster.produce(0, 0, 3);   // offset 0: ids 0..2
  cluster.produce(0, 3, 3);   // offset 1: ids 3..5
  cluster.produce(0, 6, 4);   // offset 2: ids 6..9
  const KafkaUri uri = test_uri(cluster, "events");
  ReadPosition position = ReadPosition::start_stream("events", 1);
  {
    auto source = make_source(uri, {0}, position, 4);
    auto b1 = source->next();
    ASSERT_TRUE(b1);
    EXPECT_EQ(ids_of(*b1), (std::vector<int64_t>{0, 1, 2, 3}));
    // Columns in the requested order, strings intact; rows named by partition and offset.
    EXPECT_EQ(b1->records.typed_columns[0].name, "name");
    EXPECT_EQ(b1->records.typed_columns[0].values.bytes(3), "n3");
    EXPECT_EQ(b1->records.describe_row(3), "topic events partition 0 offset 1");
    EXPECT_EQ(b1->stream_marks, (std::vector<PartitionPosition>{{0, 1, 1}}));  // 1 row of offset 1 used
    position.advance(0, rows_per_file(*b1), b1->stream_marks);
    auto b2 = source->next();
    ASSERT_TRUE(b2);
    EXPECT_EQ(ids_of(*b2), (std::vector<int64_t>{4, 5, 6, 7}));
    EXPECT_EQ(b2->stream_marks, (std::vector<PartitionPosition>{{0, 2, 2}}));
  }
  // Resumed after the first batch: the next rows are 4.. (inside the message at offset 1).
  auto resumed = make_source(uri, {0}, position, 4);
  auto b = resumed->next();
  ASSERT_TRUE(b);
  EXPECT_EQ(ids_of(*b), (std::vector<int64_t>{4, 5, 6, 7}));
  // A message produced later arrives: the stream continues (ids 8, 9 then 10, 11).
  cluster.produce(0, 10, 2);
  b = resumed->next();
  ASSERT_TRUE(b);
  EXPECT_EQ(ids_of(*b), (std::vector<int64_t>{8, 9, 10, 11}));
  EXPECT_EQ(b->stream_marks, (std::vector<PartitionPosition>{{0, 4, 0}}));
}

TEST(KafkaBatchSource, SchemalessMessagesAndPartitionsOfOneWorker) {
  MockCluster cluster("t2", 2);
  cluster.produce(0, 0, 2, /*schemaless=*/true);
  cluster.produce(1, 100, 2, /*schemaless=*/true);
  const KafkaUri uri = test_uri(cluster, "t2");
  auto source = make_source(uri, {0, 1}, ReadPosition::start_stream("t2", 1), 4, MockCluster::test_schema());
  auto b = source->next();
  ASSERT_TRUE(b);
  auto ids = ids_of(*b);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 100, 101}));
  auto marks = b->stream_marks;
  EXPECT_EQ(marks, (std::vector<PartitionPosition>{{0, 1, 0}, {1, 1, 0}}));
}

TEST(KafkaBatchSource, MalformedMessageNamesTopicPartitionAndOffset) {
  MockCluster cluster("bad", 1);
  cluster.produce(0, 0, 2);
  cluster.produce_raw(0, "not arrow at all");
  const KafkaUri uri = test_uri(cluster, "bad");
  auto source = make_source(uri, {0}, ReadPosition::start_stream("bad", 1), 4);
  const std::string e = error_of<DataError>([&] { source->next(); });
  EXPECT_EQ(e.rfind("topic bad partition 0 offset 1: ", 0), 0u) << e;
}

// malformed.messages=skip: the message that cannot be decoded is not trained and is counted; the
// read position moves past it with the next message (offset 2 used up: next offset 3).
TEST(KafkaBatchSource, MalformedMessagesAreSkippedAndCountedWhenAsked) {
  MockCluster cluster("skip", 1);
  cluster.produce(0, 0, 2);                    // offset 0: ids 0, 1
  cluster.produce_raw(0, "not arrow at all");  // offset 1
  cluster.produce(0, 2, 2);                    // offset 2: ids 2, 3
  const KafkaUri uri = parse_kafka_uri("kafka://" + cluster.bootstrap() +
                                           "/skip?group.id=g&auto.offset.reset=earliest&malformed.messages=skip",
                                       "train_input_path");
  auto source = make_source(uri, {0}, ReadPosition::start_stream("skip", 1), 4);
  auto b = source->next();
  ASSERT_TRUE(b);
  EXPECT_EQ(ids_of(*b), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(source->skipped_messages(), 1);
  EXPECT_EQ(b->stream_marks, (std::vector<PartitionPosition>{{0, 3, 0}}));
}

TEST(KafkaBatchSource, ResumingInsideAMessageTheBrokerLacksIsAnError) {
  // The position says 2 rows of the message at offset 5 were trained; the partition holds offsets
  // 0..1 only, so librdkafka falls back to auto.offset.reset (earliest: offset 0).
  MockCluster cluster("gone", 1);
  cluster.produce(0, 0, 3);
  cluster.produce(0, 3, 3);
  const KafkaUri uri = test_uri(cluster, "gone");
  ReadPosition position = ReadPosition::start_stream("gone", 1);
  position.advance(0, {{0, 10}}, {{0, 5, 2}});
  auto source = make_source(uri, {0}, position, 4);
  const std::string e = error_of<DataError>([&] { source->next(); });
  EXPECT_EQ(e,
            "topic gone partition 0 offset 0: the checkpoint resumes inside the message at offset 5 "
            "of partition 0, which the broker no longer has (retention?); its remaining rows and "
            "the messages before offset 0 cannot be trained");
}

TEST(KafkaBatchSource, DeadBrokerIsAnErrorNotAHang) {
  // (An unknown topic cannot be shown here: the mock broker creates topics on request.)
  // Nothing listens on this port: within TZREC_KAFKA_BROKER_TIMEOUT_S the consumer gives up.
  ::setenv("TZREC_KAFKA_BROKER_TIMEOUT_S", "2", 1);
  KafkaUri dead = parse_kafka_uri("kafka://127.0.0.1:1/t?group.id=g", "train_input_path");
  KafkaConsumer lonely(dead, "rank 0 worker 0");
  const std::string down = error_of<DataError>([&] { lonely.partition_count(); });
  ::unsetenv("TZREC_KAFKA_BROKER_TIMEOUT_S");
  EXPECT_NE(down.find("(rank 0 worker 0): no metadata for topic 't'"), std::string::npos) << down;
  EXPECT_NE(down.find("TZREC_KAFKA_BROKER_TIMEOUT_S"), std::string::npos) << down;
}

}  // namespace kafka_dataset_test
}  // namespace tzrec::data
