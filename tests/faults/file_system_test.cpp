// The file-system seam: the fault plans, the counting, and the two plain-file writers (the atomic
// file writer every model file and CLI output goes through, and the export folder writer) failed
// at every step. The databases are failed at every step through the CLI (fault_matrix.py).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <sys/stat.h>

#include "fleetcast/export.h"
#include "fleetcast/file_system.h"

using namespace fleetcast;
namespace fs = std::filesystem;

namespace {

fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::path(FLEETCAST_TEST_OUTPUT_DIR) / "faults" / name;
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::map<std::string, std::string> read_tree(const fs::path& folder) {
  std::map<std::string, std::string> files;
  if (!fs::exists(folder)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), folder).string()] = read_bytes(entry.path());
  }
  return files;
}

std::size_t entries_in(const fs::path& folder) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(folder), fs::directory_iterator{}));
}

// Every plan that fails one step of a run that took `counts` steps: the k-th step of each kind,
// and a full disk after each byte count from 0 to one short of everything.
std::vector<FaultPlan> every_fault(const FaultInjectingFileSystem& counts) {
  std::vector<FaultPlan> plans;
  for (const auto& [kind, operation] : {std::pair{FaultPlan::Kind::write, FileOperation::write},
                                       std::pair{FaultPlan::Kind::sync, FileOperation::sync},
                                       std::pair{FaultPlan::Kind::rename, FileOperation::rename},
                                       std::pair{FaultPlan::Kind::remove, FileOperation::remove}}) {
    for (std::int64_t k = 1; k <= counts.count(operation); ++k) plans.push_back({kind, k});
  }
  for (std::int64_t bytes = 0; bytes < counts.bytes_written(); ++bytes) {
    plans.push_back({FaultPlan::Kind::disk_full, bytes});
  }
  return plans;
}

}  // namespace

TEST_CASE("faults: fault plans parse from their text and refuse anything else", "[faults]") {
  CHECK(parse_fault_plan("write:3")->kind == FaultPlan::Kind::write);
  CHECK(parse_fault_plan("write:3")->at == 3);
  CHECK(parse_fault_plan("sync:1")->kind == FaultPlan::Kind::sync);
  CHECK(parse_fault_plan("rename:2")->kind == FaultPlan::Kind::rename);
  CHECK(parse_fault_plan("truncate:4")->kind == FaultPlan::Kind::truncate);
  CHECK(parse_fault_plan("remove:1")->kind == FaultPlan::Kind::remove);
  CHECK(parse_fault_plan("full:0")->kind == FaultPlan::Kind::disk_full);
  CHECK(parse_fault_plan("full:4096")->at == 4096);
  for (const char* bad : {"", "write", "write:", "write:0", "write:-1", "full:-1", "fsync:1", "write:1x"}) {
    INFO(bad);
    const auto plan = parse_fault_plan(bad);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(plan.status().message(), Catch::Contains("write:N"));
  }
}

TEST_CASE("faults: an atomic write takes one write, two syncs and one rename", "[faults]") {
  const fs::path folder = fresh_folder("atomic_counts");
  PosixFileSystem disk;
  FaultInjectingFileSystem counting(disk, std::nullopt);
  REQUIRE(write_file_atomically(folder / "out.txt", "hello", &counting).ok());
  CHECK(counting.count(FileOperation::write) == 1);
  CHECK(counting.count(FileOperation::sync) == 2);  // the file, then its folder after the rename
  CHECK(counting.count(FileOperation::rename) == 1);
  CHECK(counting.count(FileOperation::remove) == 0);
  CHECK(counting.bytes_written() == 5);
  CHECK_FALSE(counting.fault_injected());
  CHECK(read_bytes(folder / "out.txt") == "hello");
}

TEST_CASE("faults: an atomic write failed at any step keeps the previous file or the whole new one", "[faults]") {
  const fs::path folder = fresh_folder("atomic");
  const fs::path target = folder / "model.json";
  const std::string previous = "{\"version\": 1}\n";
  const std::string next = "{\"version\": 2, \"parameters\": [1, 2, 3]}\n";
  PosixFileSystem disk;
  FaultInjectingFileSystem counting(disk, std::nullopt);
  REQUIRE(write_file_atomically(target, next, &counting).ok());
  const std::vector<FaultPlan> plans = every_fault(counting);
  CHECK(plans.size() == 1 + 2 + 1 + next.size());  // write, syncs, rename, each byte budget
  int kept = 0;
  int replaced = 0;
  for (const FaultPlan& plan : plans) {
    INFO("fault kind " << static_cast<int>(plan.kind) << " at " << plan.at);
    REQUIRE(write_file_atomically(target, previous).ok());
    FaultInjectingFileSystem faulty(disk, plan);
    const Status status = write_file_atomically(target, next, &faulty);
    CHECK(faulty.fault_injected());
    REQUIRE_FALSE(status.ok());
    CHECK_THAT(status.message(), Catch::StartsWith(target.string()));
    CHECK(status.code() == (plan.kind == FaultPlan::Kind::disk_full ? StatusCode::resource_exhausted
                                                                     : StatusCode::data_loss));
    const std::string content = read_bytes(target);
    // Only the folder's sync comes after the rename: the new file is whole, its durability unsure.
    const bool after_rename = plan.kind == FaultPlan::Kind::sync && plan.at == 2;
    CHECK(content == (after_rename ? next : previous));
    (after_rename ? replaced : kept) += 1;
    CHECK(entries_in(folder) == 1);  // no temporary file left beside it
    REQUIRE(write_file_atomically(target, next).ok());  // and the same write then goes through
    CHECK(read_bytes(target) == next);
  }
  CHECK(kept == static_cast<int>(plans.size()) - 1);
  CHECK(replaced == 1);
}

TEST_CASE("faults: the atomic writer writes through a link and into a device or pipe, replacing neither",
          "[faults]") {
  const fs::path folder = fresh_folder("write_through");
  const std::string next = "{\"plan\": 2}\n";
  SECTION("a chain of two links: the file they name is replaced, both links stay") {
    fs::create_directories(folder / "real");
    {
      std::ofstream(folder / "real" / "plan.json") << "old\n";
    }
    fs::create_symlink("real/plan.json", folder / "first.json");  // relative, read from the link's folder
    fs::create_symlink(fs::absolute(folder / "first.json"), folder / "second.json");
    REQUIRE(write_file_atomically(folder / "second.json", next).ok());
    CHECK(fs::is_symlink(fs::symlink_status(folder / "second.json")));
    CHECK(fs::is_symlink(fs::symlink_status(folder / "first.json")));
    CHECK(read_bytes(folder / "real" / "plan.json") == next);
    CHECK(entries_in(folder / "real") == 1);  // no temporary file left beside it
  }
  SECTION("a link to a file not yet there: the file is created where it points") {
    fs::create_symlink("later.json", folder / "link.json");
    REQUIRE(write_file_atomically(folder / "link.json", next).ok());
    CHECK(fs::is_symlink(fs::symlink_status(folder / "link.json")));
    CHECK(read_bytes(folder / "later.json") == next);
  }
  SECTION("/dev/null stays the device") {
    REQUIRE(write_file_atomically("/dev/null", next).ok());
    CHECK(fs::is_character_file("/dev/null"));
  }
  SECTION("a FIFO: a reader gets the bytes, and the FIFO stays") {
    const fs::path fifo = folder / "plan.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string received;
    std::thread reader([&] { received = read_bytes(fifo); });
    const Status status = write_file_atomically(fifo, next);
    if (!status.ok()) std::ofstream{fifo};  // opens the FIFO's other end, so the reader is not left waiting
    reader.join();
    REQUIRE(status.ok());
    CHECK(received == next);
    CHECK(fs::is_fifo(fifo));
  }
}

TEST_CASE("faults: an export failed at any step leaves no folder, or the whole export", "[faults]") {
  const fs::path parent = fresh_folder("export");
  const fs::path out = parent / "aws";
  const std::vector<exporters::ExportFile> files = {
      {"README.txt", "requests\n"}, {"groups/a.json", "{\"a\": 1}\n"}, {"groups/b.json", "{\"b\": 2}\n"}};
  const std::map<std::string, std::string> expected = {
      {"README.txt", "requests\n"}, {"groups/a.json", "{\"a\": 1}\n"}, {"groups/b.json", "{\"b\": 2}\n"}};
  PosixFileSystem disk;
  FaultInjectingFileSystem counting(disk, std::nullopt);
  REQUIRE(exporters::write_export(files, out, &counting).ok());
  CHECK(read_tree(out) == expected);
  // Three files, each synced; the export's two folders deepest first; the parent after the rename.
  CHECK(counting.count(FileOperation::write) == 3);
  CHECK(counting.count(FileOperation::sync) == 3 + 2 + 1);
  CHECK(counting.count(FileOperation::rename) == 1);
  const std::vector<FaultPlan> plans = every_fault(counting);
  for (const bool out_was_an_empty_folder : {false, true}) {
    for (const FaultPlan& plan : plans) {
      INFO("fault kind " << static_cast<int>(plan.kind) << " at " << plan.at << ", empty folder "
                         << out_was_an_empty_folder);
      fs::remove_all(out);
      if (out_was_an_empty_folder) fs::create_directory(out);
      FaultInjectingFileSystem faulty(disk, plan);
      const Status status = exporters::write_export(files, out, &faulty);
      CHECK(faulty.fault_injected());
      REQUIRE_FALSE(status.ok());
      const bool after_rename = plan.kind == FaultPlan::Kind::sync && plan.at == 6;
      CHECK_THAT(status.message(), Catch::StartsWith(out.string() + ": "));
      CHECK(read_tree(out) == (after_rename ? expected : std::map<std::string, std::string>{}));
      CHECK(fs::exists(out) == (after_rename || out_was_an_empty_folder));
      CHECK(entries_in(parent) == (fs::exists(out) ? 1U : 0U));  // no temporary folder left
      if (!after_rename) {
        REQUIRE(exporters::write_export(files, out).ok());
        CHECK(read_tree(out) == expected);
      }
    }
  }
}
