// The driver of bench/dynamic_probe_ab.sh: two revisions of DynamicTable (A and B, each built from
// bench/dynamic_probe_variant.cc into a namespace of its own) probe the same batches in turns, each
// call after a pass over 512 MiB of other memory (as a training step between two remaps leaves the
// caches and translations), in the order A B, B A, A B, ... so that neither side always goes first.
// Prints per kind of call the median milliseconds of each side and the median of the per-pair
// ratios B / A: the machine's drift between minutes cancels out of the ratio. Then, as a floor for
// find(), a plain gather of the same batches — one random 64-byte line per id from an array as
// large as the index (17 bytes per live id, on huge pages), the line picked by the id's mix64 as
// the table picks a home line, prefetched 32 ids ahead, the ids split between the threads as the
// probe splits them — and of the 128-byte aligned pair of lines around that one (what reading a
// neighbouring line as well costs), in turns with A's find(), after the same pass over other memory.
//
//   dynamic_probe_ab LIVE_IDS PAIRS THREADS
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <omp.h>

#include "base/huge_pages.h"
#include "base/stable_hash.h"

void setup_A(int64_t live, int threads, uint64_t seed);
void setup_B(int64_t live, int threads, uint64_t seed);
double probe_A(int kind, int dist, int batch);
double probe_B(int kind, int dist, int batch);
const int64_t* batch_A(int dist, int batch);

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

constexpr size_t kBatchIds = 4096 * 26;

// Milliseconds of reading one line of `lines` (64 bytes each, from `array`) per id of `ids`, and
// with `pair` its neighbour in their 128-byte pair too.
double gather(const int64_t* ids, const char* array, uint64_t lines, int threads, bool pair) {
  constexpr size_t kAhead = 32;
  uint64_t sum = 0;
  const auto start = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  {
    const size_t part = static_cast<size_t>(omp_get_thread_num()), parts = static_cast<size_t>(omp_get_num_threads());
    const size_t lo = kBatchIds * part / parts, hi = kBatchIds * (part + 1) / parts;
    const auto line = [&](size_t i) { return array + tzrec::mix64(static_cast<uint64_t>(ids[i])) % lines * 64; };
    for (size_t i = lo; i < hi + kAhead; ++i) {
      if (i < hi) {
        __builtin_prefetch(line(i));
        if (pair) __builtin_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(line(i)) ^ 64));
      }
      if (i >= lo + kAhead) {
        const char* l = line(i - kAhead);
        sum += static_cast<unsigned char>(*l);
        if (pair) sum += static_cast<unsigned char>(*reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(l) ^ 64));
      }
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (sum == 1) std::printf(" ");  // keeps the loads
  return ms;
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
  // The floor: A's find() against a gather of one line per id, and of a pair of lines per id.
  const uint64_t lines = (static_cast<uint64_t>(live) * 17 / 64 + 1) & ~uint64_t{1};
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t bytes = (lines * 64 + kHuge - 1) / kHuge * kHuge;
  char* array = static_cast<char*>(std::aligned_alloc(kHuge, bytes));
  if (array == nullptr) {
    std::fprintf(stderr, "cannot allocate the gather's %zu bytes\n", bytes);
    return 1;
  }
  tzrec::advise_huge_pages(array, bytes);
  for (size_t i = 0; i < bytes; i += 64) array[i] = static_cast<char>(i >> 6);
  for (int dist = 0; dist < 2; ++dist) {
    std::vector<double> a, one, two, ratio;
    for (int p = 0; p < pairs; ++p) {
      double x[3] = {0, 0, 0};
      for (int turn = 0; turn < 3; ++turn) {
        const int what = (turn + p) % 3;  // each of the three goes first in turn
        evict();
        x[what] = what == 0 ? probe_A(0, dist, p) : gather(batch_A(dist, p), array, lines, threads, what == 2);
      }
      a.push_back(x[0]);
      one.push_back(x[1]);
      two.push_back(x[2]);
      ratio.push_back(x[0] / x[1]);
    }
    std::printf("%-26s A %.3f ms  one line per id %.3f ms  A/line %.3f (median of the pairs' ratios); an aligned "
                "pair of lines per id %.3f ms\n",
                names[0][dist], median(a), median(one), median(ratio), median(two));
  }
  std::free(array);
  return 0;
}
