// Shared helpers of the fuzz harnesses (tests/fuzz/*.cpp). Each harness defines
// LLVMFuzzerTestOneInput; it is linked with libFuzzer in the `fuzz` preset and with
// regression_main.cpp in the normal build, which replays the seed and regression corpora.
//
// The library promises errors as values, so anything it throws is a bug: `no_escape` turns an
// escaping exception into an abort, which libFuzzer reports as a crash and ctest as a failure.
// `expect` does the same for a broken invariant the harness checks itself (a round trip).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace fleetcast::fuzz {

[[noreturn]] inline void fail(std::string_view what) {
  std::fprintf(stderr, "fuzz: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

inline void expect(bool condition, std::string_view what) {
  if (!condition) fail(what);
}

/// Runs `body`; an exception leaving it aborts the process, naming the exception.
template <typename Body>
void no_escape(Body&& body) {
  try {
    body();
  } catch (const std::exception& error) {
    fail(std::string("exception escaped the library: ") + error.what());
  } catch (...) {
    fail("exception of unknown type escaped the library");
  }
}

/// Prints why the library refused an input when FLEETCAST_FUZZ_VERBOSE is set, for triage (a
/// regression replay or `fuzz_<harness> FILE`); silent otherwise, as the fuzzer runs millions.
inline void explain(std::string_view message) {
  if (std::getenv("FLEETCAST_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "refused: %.*s\n", static_cast<int>(message.size()), message.data());
  }
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// The separator of the parts of a multi-file input (the scenario JSON, then the CSVs it names):
/// a line that no JSON or CSV the parsers accept needs, and short enough for the mutator to keep.
inline constexpr std::string_view kPartSeparator = "\n--8<--\n";

/// `text` cut at each separator, at most `max_parts` parts (the last one keeps any further
/// separators); missing parts are empty.
inline std::vector<std::string_view> split_parts(std::string_view text, std::size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const std::size_t at = text.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(text);
  parts.resize(max_parts);
  return parts;
}

/// A folder of this process under the system's temporary directory, for harnesses whose parser
/// reads files. Made once per process (the fuzzer calls the harness millions of times), named by
/// the process id so that parallel fuzzers and tests do not share one, and removed at exit.
class ScratchDir {
 public:
  ScratchDir()
      : path_(std::filesystem::temp_directory_path() / ("fleetcast-fuzz-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline const std::filesystem::path& scratch_dir() {
  static const ScratchDir dir;
  return dir.path();
}

/// Replaces `path` with exactly `bytes`.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail("cannot write " + path.string());
}

/// Replaces the SQLite file `path` with exactly `bytes`, first removing any journal or WAL an
/// earlier input left beside it (SQLite would replay it into this one).
inline void write_database_file(const std::filesystem::path& path, std::string_view bytes) {
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::filesystem::remove(path.string() + suffix);
  }
  write_file(path, bytes);
}

}  // namespace fleetcast::fuzz
