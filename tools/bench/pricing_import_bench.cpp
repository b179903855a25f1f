// Import benchmark of the pricing database: times the import of the real ec2instances.info file
// (3.8 MB, 84 GPU instance types) into a fresh database, parse and write in one transaction, and
// prints the median of several repetitions with the rows written per second.
//
// Usage: bench_pricing_import [file=../shared/data/prices/ec2instances_gpu_2025-11-30.json]
//                             [repetitions=7] [scratch-dir=/tmp]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fleetcast/pricing.h"

using namespace fleetcast;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path file =
      argc > 1 ? argv[1] : FLEETCAST_SOURCE_DIR "/../shared/data/prices/ec2instances_gpu_2025-11-30.json";
  const int repetitions = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  const std::filesystem::path scratch = argc > 3 ? argv[3] : std::filesystem::temp_directory_path();
  const std::filesystem::path db_file = scratch / "bench_pricing_import.db";

  std::vector<double> parse_seconds, import_seconds;
  std::int64_t rows = 0;
  for (int i = 0; i < repetitions; ++i) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_file.string() + suffix);
    PriceDatabase::Options options;
    options.seed_builtin_catalog = false;
    auto db = PriceDatabase::open(db_file, options);
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", db.status().to_string().c_str());
      return 1;
    }
    const auto parse_start = Clock::now();
    const auto catalog = parse_price_file(ImportFormat::ec2instances, file);
    parse_seconds.push_back(std::chrono::duration<double>(Clock::now() - parse_start).count());
    if (!catalog.ok()) {
      std::fprintf(stderr, "%s\n", catalog.status().to_string().c_str());
      return 1;
    }
    const auto import_start = Clock::now();
    const auto summary = (*db)->import_file(ImportFormat::ec2instances, file);
    import_seconds.push_back(std::chrono::duration<double>(Clock::now() - import_start).count());
    if (!summary.ok()) {
      std::fprintf(stderr, "%s\n", summary.status().to_string().c_str());
      return 1;
    }
    rows = summary->rows;
  }
  const double import_median = median(import_seconds);
  std::printf("file: %s (%.1f MB)\n", file.c_str(), static_cast<double>(std::filesystem::file_size(file)) / 1e6);
  std::printf("rows written per import: %lld\n", static_cast<long long>(rows));
  std::printf("parse only:        median %.1f ms over %d runs\n", 1e3 * median(parse_seconds), repetitions);
  std::printf("import (parse + write, one transaction): median %.1f ms over %d runs, %.0f rows/s\n",
              1e3 * import_median, repetitions, static_cast<double>(rows) / import_median);
  return 0;
}
