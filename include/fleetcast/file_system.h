// The file-system seam: every file the library writes goes through a FileSystem, so that a test
// can make a write, a sync, a rename or the disk fail at any step (as LevelDB's Env does).
//
// Plain files (model files, exports, the CLI's output files) are written with the calls below;
// SQLite databases (price catalog, model store, results database) are written by SQLite itself,
// which offers each of its writes, syncs, truncations and deletions to admit_database_io() when the
// database was opened with a FileSystem. Writers take a `FileSystem*` (an option or a trailing
// argument); nullptr, the default, is the real file system with SQLite's own I/O untouched.
//
// Thread-safety: PosixFileSystem is stateless; FaultInjectingFileSystem counts with atomics, so
// both may be shared by threads. A FileSystem must outlive every file and database opened with it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "fleetcast/status.h"

namespace fleetcast {

/// The steps of writing at which a disk can fail.
enum class FileOperation {
  write,     // bytes written to a file (a plain file, a database, its journal or WAL)
  sync,      // a file's or a folder's contents made durable (fsync)
  rename,    // a file or folder moved into place
  truncate,  // a database file or its journal cut short (SQLite only)
  remove,    // a file or empty folder deleted (a database's journal, an export's empty target)
};
inline constexpr std::size_t kFileOperationCount = 5;
/// "write", "sync", "rename", "truncate", "remove".
std::string_view file_operation_name(FileOperation operation) noexcept;

/// A file being written. Errors name the file. Closing without sync() keeps what was written but
/// promises nothing about a crash.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status append(std::string_view bytes) = 0;
  virtual Status sync() = 0;
  virtual Status close() = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  /// Creates `path` (truncating a file there) for writing.
  virtual Result<std::unique_ptr<WritableFile>> create_file(const std::filesystem::path& path) = 0;
  /// Creates the folder and its missing parents; an existing folder is fine.
  virtual Status create_folders(const std::filesystem::path& path) = 0;
  /// Makes a folder's entries (files created, renamed or removed in it) durable.
  virtual Status sync_folder(const std::filesystem::path& path) = 0;
  /// Moves `from` to `to`, replacing a file (or an empty folder) there, atomically.
  virtual Status rename(const std::filesystem::path& from, const std::filesystem::path& to) = 0;
  /// Deletes a file or an empty folder; one that is not there is not an error.
  virtual Status remove(const std::filesystem::path& path) = 0;
  /// Deletes a file or a folder with everything in it (cleaning up after a failed write).
  virtual Status remove_all(const std::filesystem::path& path) = 0;
  /// Asked before SQLite writes `bytes` to, syncs, truncates or deletes `file` (a database, its
  /// journal or WAL) of a database opened with this FileSystem; an error fails that operation as
  /// the disk would (resource_exhausted: the disk is full). The real file system admits all.
  virtual Status admit_database_io(FileOperation operation, const std::filesystem::path& file, std::size_t bytes);

  /// Whether write_whole_file syncs the file before closing it: every file a writer replaces is
  /// synced; a device, pipe or terminal written into cannot be.
  enum class Sync { before_close, never };
  /// Creates (or truncates) `path` with `contents`, closed, and synced as asked: the building block
  /// of every writer.
  Status write_whole_file(const std::filesystem::path& path, std::string_view contents, Sync sync = Sync::before_close);
};

/// The real file system: POSIX open/write/fsync/rename/unlink. Stateless.
class PosixFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> create_file(const std::filesystem::path& path) override;
  Status create_folders(const std::filesystem::path& path) override;
  Status sync_folder(const std::filesystem::path& path) override;
  Status rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Status remove(const std::filesystem::path& path) override;
  Status remove_all(const std::filesystem::path& path) override;
};

/// Writes `contents` to `path` so that `path` holds either its previous content or all of the new
/// one, even across a crash: a temporary file beside it is written, synced and renamed over it,
/// then the folder is synced. On failure the temporary file is removed and the error names `path`.
/// A symbolic link is written through: the file it names is replaced and the link stays. A device,
/// pipe or socket already at `path` (/dev/null, a FIFO, a terminal) is written into as a stream,
/// neither replaced nor synced. nullptr `file_system`: the real one.
Status write_file_atomically(const std::filesystem::path& path, std::string_view contents,
                             FileSystem* file_system = nullptr);

// ---- Fault injection (tests, and the CLI's FLEETCAST_INJECT_FAULT) ------------------------------

/// Which operation fails. `at` counts operations of that kind from 1 (every writer's operations
/// through the same FileSystem, plain files and databases together); for disk_full it is the
/// number of bytes that fit: the write that would pass it writes what fits and fails, as does
/// every write after it.
struct FaultPlan {
  enum class Kind { write, sync, rename, truncate, remove, disk_full };
  Kind kind = Kind::write;
  std::int64_t at = 1;
};

/// Parses "write:N", "sync:N", "rename:N", "truncate:N", "remove:N" or "full:BYTES" (N >= 1,
/// BYTES >= 0); invalid_argument naming the text and the forms otherwise.
Result<FaultPlan> parse_fault_plan(std::string_view text);

/// A FileSystem over `base` that counts every operation and fails the one the plan names (once;
/// disk_full stays full). With no plan it only counts, which is how a test learns how many steps
/// a clean run takes. Injected errors: data_loss "<file>: <operation> failed: input/output error
/// (injected fault)", or resource_exhausted "...: no space left on device (injected fault)".
class FaultInjectingFileSystem final : public FileSystem {
 public:
  FaultInjectingFileSystem(FileSystem& base, std::optional<FaultPlan> plan);

  Result<std::unique_ptr<WritableFile>> create_file(const std::filesystem::path& path) override;
  Status create_folders(const std::filesystem::path& path) override;
  Status sync_folder(const std::filesystem::path& path) override;
  Status rename(const std::filesystem::path& from, const std::filesystem::path& to) override;
  Status remove(const std::filesystem::path& path) override;
  Status remove_all(const std::filesystem::path& path) override;
  Status admit_database_io(FileOperation operation, const std::filesystem::path& file, std::size_t bytes) override;

  /// Admits or fails one operation on `file` of `bytes` (writes), counting it. For a disk_full
  /// fault on a write, `*bytes_that_fit` (when given) is set to how many of `bytes` to write
  /// before failing; otherwise it is left alone.
  Status admit(FileOperation operation, const std::filesystem::path& file, std::size_t bytes,
               std::size_t* bytes_that_fit = nullptr);

  /// Operations of a kind seen so far (the failed one included), and bytes admitted for writing.
  [[nodiscard]] std::int64_t count(FileOperation operation) const;
  [[nodiscard]] std::int64_t bytes_written() const;
  /// Whether the plan's fault has happened.
  [[nodiscard]] bool fault_injected() const;

 private:
  FileSystem& base_;
  std::optional<FaultPlan> plan_;
  std::array<std::atomic<std::int64_t>, kFileOperationCount> counts_{};
  std::atomic<std::int64_t> bytes_written_{0};
  std::atomic<bool> injected_{false};
};

}  // namespace fleetcast
