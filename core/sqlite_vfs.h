// The SQLite VFS through which a database opened with a FileSystem does its I/O (see
// sqlite_vfs.cpp). Internal to core/sqlite.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

#include <sqlite3.h>

#include "core/sqlite.h"
#include "fleetcast/file_system.h"

namespace fleetcast::sqlite {

/// Registered (under a name unique to the object) for its lifetime. Not copyable; the connection
/// using it holds it (ConnectionCloser).
class AdmittingVfs {
 public:
  AdmittingVfs(FileSystem& files, sqlite3_vfs* real);
  ~AdmittingVfs() { sqlite3_vfs_unregister(&vfs_); }
  AdmittingVfs(const AdmittingVfs&) = delete;
  AdmittingVfs& operator=(const AdmittingVfs&) = delete;

  [[nodiscard]] const char* name() const { return name_; }
  [[nodiscard]] bool registered() const { return registered_; }

  /// SQLITE_OK when the file system admits the operation, else the code the disk would give:
  /// resource_exhausted -> SQLITE_FULL, permission_denied -> SQLITE_READONLY, else `io_error`.
  int admit(FileOperation operation, const char* file, std::size_t bytes, int io_error) const {
    const Status admitted = files_.admit_database_io(operation, file != nullptr ? file : "(temporary file)", bytes);
    if (admitted.ok()) return SQLITE_OK;
    switch (admitted.code()) {
      case StatusCode::resource_exhausted:
        return SQLITE_FULL;
      case StatusCode::permission_denied:
        return SQLITE_READONLY;  // a read-only file system
      default:
        return io_error;
    }
  }

  static AdmittingVfs& of(sqlite3_vfs* vfs) { return *static_cast<AdmittingVfs*>(vfs->pAppData); }
  [[nodiscard]] sqlite3_vfs* real() const { return real_; }
  [[nodiscard]] const sqlite3_io_methods* methods() const { return &methods_; }

 private:
  FileSystem& files_;
  sqlite3_vfs* real_;
  sqlite3_vfs vfs_{};
  sqlite3_io_methods methods_{};
  char name_[48]{};
  bool registered_ = false;
};

/// Registers a VFS that offers `files` every write, sync, truncation and deletion (`file` names
/// the database in errors).
Result<std::shared_ptr<AdmittingVfs>> make_admitting_vfs(FileSystem& files, const std::filesystem::path& file);

}  // namespace fleetcast::sqlite
