// Negative-sampler benchmark: table load time and sampled negatives (with their attribute
// strings, column by column) per second per thread.
//
// Writes (once, into --data_dir) an item table of --items rows in the local text format
// ("id:int64\tweight:float\tattrs:string"; weights 1..100, --attrs attributes joined by ':',
// ~50 bytes per row) and, for negative_sampler_v2, a positive edge table (--items / 10 users with
// 10 edges each), optionally (--parquet) the item table as Parquet too. Then, per sampler kind:
//   load:   the item table alone (text, and Parquet with --parquet), the edge table alone (v2),
//           and NegativeSampler::create (all its tables plus the alias / lookup tables);
//   sample: --threads threads share the sampler, each calling sample() on batches of
//           --batch_size random item ids (and users) for --seconds, --repeat times; prints the
//           best run's negatives per second per thread (all negatives of all calls, attributes
//           materialized) over the wall time inside sample() and over the thread CPU time inside
//           it (what a dedicated core would give when the machine is shared and threads get
//           descheduled).
//
//   build-bench/tzrec_sampler_bench --items 10000000 --threads 1 --data_dir /tmp/sampler_bench
#include <fmt/format.h>
#include <time.h>
#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "data/negative_sampler.h"
#include "parquet/writer.h"

namespace {

using namespace tzrec;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t mix(uint64_t x) { return splitmix64(x); }

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void append_int(std::string* s, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  s->append(buf, static_cast<size_t>(r.ptr - buf));
}

// Attribute j of item i: small integer-like ids of different cardinalities.
int64_t attr_value(int64_t i, int j) {
  static const int64_t kCard[] = {0, 100000, 1000000, 50000, 200000, 10000, 30, 1000};
  if (j == 0) return i;  // the item id itself (attr_fields usually start with item_id_field)
  return static_cast<int64_t>(mix(static_cast<uint64_t>(i) * 31 + j) % static_cast<uint64_t>(kCard[j % 8]));
}

void write_items_text(const std::string& path, int64_t n, int attrs) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  std::string buf = "id:int64\tweight:float\tattrs:string\n";
  for (int64_t i = 0; i < n; ++i) {
    append_int(&buf, i);
    buf += '\t';
    append_int(&buf, static_cast<int64_t>(mix(static_cast<uint64_t>(i)) % 100) + 1);
    buf += '\t';
    for (int j = 0; j < attrs; ++j) {
      if (j > 0) buf += ':';
      append_int(&buf, attr_value(i, j));
    }
    buf += '\n';
    if (buf.size() > (1 << 22)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
}

void write_items_parquet(const std::string& text_path, const std::string& path, int attrs) {
  // Same rows as the text table (read back through the loader to avoid a second generator).
  data::SamplerTableOptions o;
  o.num_attrs = static_cast<size_t>(attrs);
  const auto t = data::NodeTable::load(text_path, data::NodeTable::Kind::kItem, o);
  parquet::WriterOptions wo;
  wo.row_group_rows = 1 << 20;
  parquet::FileWriter w(path,
                        {parquet::WriterField{"id", parquet::PhysicalType::kInt64, false},
                         parquet::WriterField{"weight", parquet::PhysicalType::kFloat, false},
                         parquet::WriterField{"attrs", parquet::PhysicalType::kByteArray, false}},
                        wo);
  const int64_t chunk = 1 << 20;
  for (int64_t b = 0; b < t->size(); b += chunk) {
    const int64_t e = std::min(t->size(), b + chunk);
    parquet::ColumnBuilder id(w.schema().column(0)), weight(w.schema().column(1)), at(w.schema().column(2));
    for (int64_t i = b; i < e; ++i) {
      id.append(t->key(i));
      weight.append(t->weights()[static_cast<size_t>(i)]);
      at.append_string(t->attrs(i));
    }
    parquet::Table tb;
    tb.num_rows = e - b;
    tb.columns.push_back(id.finish());
    tb.columns.push_back(weight.finish());
    tb.columns.push_back(at.finish());
    w.write(std::move(tb));
  }
  w.close();
}

void write_edges_text(const std::string& path, int64_t users, int64_t items, int per_user) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  std::string buf = "userid:int64\titemid:int64\tweight:float\n";
  for (int64_t u = 0; u < users; ++u) {
    for (int k = 0; k < per_user; ++k) {
      append_int(&buf, u);
      buf += '\t';
      append_int(&buf, static_cast<int64_t>(mix(static_cast<uint64_t>(u) * 131 + k) % static_cast<uint64_t>(items)));
      buf += "\t1\n";
    }
    if (buf.size() > (1 << 22)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
}

void write_users_text(const std::string& path, int64_t users) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  std::string buf = "id:int64\tweight:float\n";
  for (int64_t u = 0; u < users; ++u) {
    append_int(&buf, u);
    buf += "\t1\n";
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("tzrec negative-sampler benchmark (table load, negatives with attributes per second)");
  int64_t items = 10000000;
  int attrs = 6;
  int threads = 1;
  int64_t batch_size = 4096;
  uint32_t num_sample = 1024;
  double seconds = 5.0;
  int repeat = 3;
  bool parquet_too = false;
  std::string data_dir = "/tmp/tzrec_sampler_bench";
  std::vector<std::string> kinds = {"negative_sampler"};
  app.add_option("--items", items, "rows of the item table")->capture_default_str();
  app.add_option("--attrs", attrs, "attributes per item (attr_fields)")->capture_default_str();
  app.add_option("--threads", threads, "threads sampling from one shared sampler")->capture_default_str();
  app.add_option("--batch_size", batch_size, "item ids per sample() call")->capture_default_str();
  app.add_option("--num_sample", num_sample, "negatives per call")->capture_default_str();
  app.add_option("--seconds", seconds, "sampling time per run")->capture_default_str();
  app.add_option("--repeat", repeat, "sampling runs per kind (the best is reported)")->capture_default_str();
  app.add_flag("--parquet", parquet_too, "also write and load the item table as Parquet");
  app.add_option("--data_dir", data_dir, "where the generated tables are kept")->capture_default_str();
  app.add_option("--kinds", kinds, "sampler kinds to measure")
      ->check(CLI::IsMember({"negative_sampler", "negative_sampler_v2"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    std::filesystem::create_directories(data_dir);
    const std::string item_path = fmt::format("{}/items_{}_{}.txt", data_dir, items, attrs);
    const int64_t users = std::max<int64_t>(1, items / 10);
    const std::string user_path = fmt::format("{}/users_{}.txt", data_dir, users);
    const std::string edge_path = fmt::format("{}/pos_edges_{}.txt", data_dir, users);
    if (!std::filesystem::exists(item_path)) {
      const auto t0 = std::chrono::steady_clock::now();
      write_items_text(item_path, items, attrs);
      fmt::print("wrote {} in {:.1f} s\n", item_path, seconds_since(t0));
    }
    fmt::print("item table: {} rows, {:.0f} MB, {} attributes\n", items,
               static_cast<double>(std::filesystem::file_size(item_path)) / 1e6, attrs);
    std::vector<std::string> attr_fields;
    for (int j = 0; j < attrs; ++j) attr_fields.push_back(fmt::format("attr_{}", j));

    {
      const std::string pq = fmt::format("{}/items_{}_{}.parquet", data_dir, items, attrs);
      if (parquet_too && !std::filesystem::exists(pq)) write_items_parquet(item_path, pq, attrs);
      std::vector<std::string> paths{item_path};
      if (parquet_too) paths.push_back(pq);
      for (const auto& p : paths) {
        data::SamplerTableOptions o;
        o.num_attrs = static_cast<size_t>(attrs);
        const auto t0 = std::chrono::steady_clock::now();
        const auto t = data::NodeTable::load(p, data::NodeTable::Kind::kItem, o);
        const double s = seconds_since(t0);
        fmt::print("load item table ({}): {:.2f} s ({:.1f} M rows/s), {:.0f} MB held\n", p == pq ? "parquet" : "text",
                   s, static_cast<double>(t->size()) / 1e6 / s, static_cast<double>(t->memory_bytes()) / 1e6);
      }
    }

    for (const std::string& kind_name : kinds) {
      data::NegativeSamplerConfig c;
      c.kind =
          kind_name == "negative_sampler" ? data::SamplerKind::kNegativeSampler : data::SamplerKind::kNegativeSamplerV2;
      c.config_path = "data_config." + kind_name;
      c.item_input_path = item_path;
      c.num_sample = num_sample;
      c.attr_fields = attr_fields;
      c.item_id_field = "attr_0";
      if (c.kind == data::SamplerKind::kNegativeSamplerV2) {
        if (!std::filesystem::exists(edge_path)) write_edges_text(edge_path, users, items, 10);
        if (!std::filesystem::exists(user_path)) write_users_text(user_path, users);
        const auto t0 = std::chrono::steady_clock::now();
        const auto e =
            data::EdgeTable::load(edge_path, data::EdgeTable::Order::kFileOrder, data::SamplerTableOptions{});
        const double s = seconds_since(t0);
        fmt::print(
            "load positive edge table (text): {} edges of {} users: {:.2f} s ({:.1f} M rows/s), {:.0f} MB held\n",
            e->num_edges(), e->num_sources(), s, static_cast<double>(e->num_edges()) / 1e6 / s,
            static_cast<double>(e->memory_bytes()) / 1e6);
        c.user_input_path = user_path;
        c.pos_edge_input_path = edge_path;
        c.user_id_field = "user_id";
      }
      const auto t0 = std::chrono::steady_clock::now();
      const auto sampler = data::NegativeSampler::create(c, true);
      const double load = seconds_since(t0);
      int64_t held = sampler->items().memory_bytes();
      if (sampler->pos_edges()) held += sampler->pos_edges()->memory_bytes();
      fmt::print("{}: create (load tables + sampling tables) {:.2f} s, {:.0f} MB held\n", kind_name, load,
                 static_cast<double>(held) / 1e6);

      double best_wall = 0, best_cpu = 0, best_all = 0;
      for (int run = 0; run < repeat; ++run) {
        std::atomic<int64_t> total{0};
        std::atomic<bool> stop{false};
        std::vector<double> busy(static_cast<size_t>(threads), 0.0);
        std::vector<double> cpu(static_cast<size_t>(threads), 0.0);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            std::vector<int64_t> batch_items(static_cast<size_t>(batch_size)),
                batch_users(static_cast<size_t>(batch_size));
            data::SampledNegatives out;
            int64_t n = 0;
            double spent = 0, spent_cpu = 0;
            for (int64_t b = 0; !stop.load(std::memory_order_relaxed); ++b) {
              for (int64_t i = 0; i < batch_size; ++i) {
                const uint64_t r = mix(static_cast<uint64_t>(b) * 1000003 + i + static_cast<uint64_t>(t) * 7919);
                batch_items[static_cast<size_t>(i)] = static_cast<int64_t>(r % static_cast<uint64_t>(items));
                batch_users[static_cast<size_t>(i)] = static_cast<int64_t>((r >> 32) % static_cast<uint64_t>(users));
              }
              data::SampleContext ctx;
              ctx.seed = 1;
              ctx.worker = t;
              ctx.batch_index = b;
              const auto s0 = std::chrono::steady_clock::now();
              const double c0 = thread_cpu_seconds();
              sampler->sample(batch_items, batch_users, ctx, &out);
              spent_cpu += thread_cpu_seconds() - c0;
              spent += seconds_since(s0);
              n += out.size();
            }
            total += n;
            busy[static_cast<size_t>(t)] = spent;
            cpu[static_cast<size_t>(t)] = spent_cpu;
          });
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        stop = true;
        for (auto& th : pool) th.join();
        double busy_sum = 0, cpu_sum = 0;
        for (double b : busy) busy_sum += b;
        for (double c : cpu) cpu_sum += c;
        best_wall = std::max(best_wall, static_cast<double>(total.load()) / busy_sum / 1e6);
        best_cpu = std::max(best_cpu, static_cast<double>(total.load()) / cpu_sum / 1e6);
        best_all = std::max(best_all, static_cast<double>(total.load()) / seconds / 1e6);
      }
      fmt::print(
          "{}: {} threads, batch {}, {} negatives x {} attrs per call, best of {}: {:.2f} M negatives/s per "
          "thread (wall), {:.2f} M/s per thread (CPU time), {:.2f} M/s in all\n",
          kind_name, threads, batch_size, num_sample, attrs, repeat, best_wall, best_cpu, best_all);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
