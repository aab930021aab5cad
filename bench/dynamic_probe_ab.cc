// The driver of bench/dynamic_probe_ab.sh: two revisions of DynamicTable (A and B, each built from
// bench/dynamic_probe_variant.cc into a namespace of its own) probe the same batches in turns, each
// call after a pass over 512 MiB of other memory (as a training step between two remaps leaves the
// caches and translations), in the order A B, B A, A B, ... so that neither side always goes first.
// Prints per kind of call the median milliseconds of each side and the median of the per-pair
// ratios B / A: the machine's drift between minutes cancels out of the ratio.
//
//   dynamic_probe_ab LIVE_IDS PAIRS THREADS
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

void setup_A(int64_t live, int threads, uint64_t seed);
void setup_B(int64_t live, int threads, uint64_t seed);
double probe_A(int kind, int dist, int batch);
double probe_B(int kind, int dist, int batch);

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s LIVE_IDS PAIRS THREADS\n", argv[0]);
    return 2;
  }
  const int64_t live = std::atoll(argv[1]);
  const int pairs = std::atoi(argv[2]);
  const int threads = std::atoi(argv[3]);
  if (live < 1 || pairs < 1 || threads < 1) {
    std::fprintf(stderr, "LIVE_IDS, PAIRS and THREADS must be positive\n");
    return 2;
  }
  setup_A(live, threads, 7);
  setup_B(live, threads, 7);
  std::vector<char> other(size_t{512} << 20, 1);
  const auto evict = [&] {
    for (size_t i = 0; i < other.size(); i += 64) ++other[i];
  };
  const char* names[2][2] = {{"find, uniform", "find, Zipf 1.05"},
                             {"find_or_insert, uniform", "find_or_insert, Zipf 1.05"}};
  std::printf("%lld live ids, %d pairs of calls of 106496 ids, %d probe threads\n", static_cast<long long>(live),
              pairs, threads);
  for (int kind = 0; kind < 2; ++kind) {
    for (int dist = 0; dist < 2; ++dist) {
      std::vector<double> a, b, ratio;
      for (int p = 0; p < pairs; ++p) {
        double x = 0, y = 0;
        if (p % 2 == 0) {
          evict();
          x = probe_A(kind, dist, p);
          evict();
          y = probe_B(kind, dist, p);
        } else {
          evict();
          y = probe_B(kind, dist, p);
          evict();
          x = probe_A(kind, dist, p);
        }
        a.push_back(x);
        b.push_back(y);
        ratio.push_back(y / x);
      }
      std::printf("%-26s A %.3f ms  B %.3f ms  B/A %.3f (median of the pairs' ratios)\n", names[kind][dist], median(a),
                  median(b), median(ratio));
    }
  }
  return 0;
}
