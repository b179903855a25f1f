// The fuzz harnesses in the normal build: replays every file of the folders given on the command
// line (the seed corpus and the regression inputs of one harness) through LLVMFuzzerTestOneInput,
// so the inputs that once crashed stay fixed without clang or libFuzzer. A crash, sanitizer report
// or escaping exception aborts the process, which ctest reports as a failure; the file being run
// is printed first so the failure names it.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path folder(argv[i]);
    // A harness without regressions yet has no regressions/ folder; the seed corpus always exists
    // (an empty run below is an error).
    if (!std::filesystem::is_directory(folder)) {
      std::fprintf(stderr, "%s: no such folder, skipped\n", argv[i]);
      continue;
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no inputs found\n");
    return 2;
  }
  // The fuzzers count an input slower than this as a hang; the replay holds the same line, with
  // room for a loaded CI machine.
  constexpr auto kSlow = std::chrono::seconds(5);
  int slow = 0;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s\n", file.string().c_str());
    const auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    if (std::chrono::steady_clock::now() - start > kSlow) {
      std::fprintf(stderr, "  slow: over %lld s\n", static_cast<long long>(kSlow.count()));
      ++slow;
    }
  }
  std::printf("%zu inputs replayed, %d slow\n", files.size(), slow);
  return slow == 0 ? 0 : 1;
}
