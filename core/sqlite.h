// Thin RAII wrappers over the SQLite C API, the one used by every database of the library (the
// price catalog, the forecast model store, the batch results database): a connection, prepared
// statements that reset themselves after use, and the mapping of SQLite result codes onto Status
// codes with messages that name the database file. Not part of the public API (which has no
// SQLite types).
//
// Thread-safety: a Connection and its statements belong to one thread at a time (PriceDatabase
// and ModelStore serialise access; a results database belongs to one thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <sqlite3.h>

#include "fleetcast/file_system.h"
#include "fleetcast/status.h"

namespace fleetcast::sqlite {

/// The Status for SQLite result code `rc` while doing `what` on database `file`: busy/locked ->
/// unavailable, read-only/permission -> permission_denied, not a database/corrupt -> data_loss,
/// disk full -> resource_exhausted,
/// cannot open -> not_found, anything else -> internal.
Status error(int rc, sqlite3* db, const std::filesystem::path& file, std::string_view what);

/// The VFS of a connection opened with a FileSystem (sqlite_vfs.cpp): SQLite's default one, each
/// write, sync, truncation and deletion first offered to FileSystem::admit_database_io.
class AdmittingVfs;

/// Closes the connection, then lets its VFS (if any) go.
struct ConnectionCloser {
  std::shared_ptr<AdmittingVfs> vfs;
  void operator()(sqlite3* db) const noexcept;
};
using Connection = std::unique_ptr<sqlite3, ConnectionCloser>;

/// A prepared statement. Binding indexes are 1-based as in SQLite.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt, const std::filesystem::path* file) : db_(db), stmt_(stmt), file_(file) {}
  Statement(Statement&& other) noexcept
      : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), file_(other.file_) {}
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  Statement& bind(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); return *this; }
  Statement& bind(int index, double value) { sqlite3_bind_double(stmt_, index, value); return *this; }
  /// Binds text; an empty view (even one with a null data pointer) binds '' rather than NULL.
  Statement& bind(int index, std::string_view value) {
    sqlite3_bind_text(stmt_, index, value.empty() ? "" : value.data(), static_cast<int>(value.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind_null(int index) { sqlite3_bind_null(stmt_, index); return *this; }

  /// Advances: true when a row is ready, false when done; an error names `what`.
  Result<bool> step(std::string_view what) {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return error(rc, db_, *file_, what);
  }
  /// Runs a statement that returns no rows.
  Status run(std::string_view what) {
    Result<bool> stepped = step(what);
    reset();
    return stepped.status();
  }
  /// Back to the start with bindings cleared, ready for the next use.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    mismatch_.clear();
  }

  /// A column of the current row. SQLite stores whatever a column is given (text in an INTEGER
  /// column of a database edited by hand), and a value of another storage class than asked for
  /// would read as 0 or "": the first such value since reset() is remembered for value_error().
  [[nodiscard]] std::int64_t int64(int column) const {
    expect(column, storage(column) == SQLITE_INTEGER, "an integer");
    return sqlite3_column_int64(stmt_, column);
  }
  [[nodiscard]] double real(int column) const {
    const int stored = storage(column);
    expect(column, stored == SQLITE_FLOAT || stored == SQLITE_INTEGER, "a number");
    return sqlite3_column_double(stmt_, column);
  }
  [[nodiscard]] bool is_null(int column) const { return storage(column) == SQLITE_NULL; }
  [[nodiscard]] std::string text(int column) const {
    expect(column, storage(column) == SQLITE_TEXT, "text");
    return raw_text(column);
  }
  /// ok, or failed_precondition (a file fleetcast cannot use, as one of another application)
  /// naming the file, `what`, the column and the value that int64(), real() or text() read as
  /// another storage class since reset().
  [[nodiscard]] Status value_error(std::string_view what) const;

 private:
  [[nodiscard]] int storage(int column) const { return sqlite3_column_type(stmt_, column); }
  [[nodiscard]] std::string raw_text(int column) const {
    const auto* chars = sqlite3_column_text(stmt_, column);
    return chars == nullptr ? std::string{}
                            : std::string(reinterpret_cast<const char*>(chars),
                                          static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
  }
  void expect(int column, bool matches, const char* expected) const;

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  const std::filesystem::path* file_;
  mutable std::string mismatch_;  // "column 'x' holds text 'abc', expected an integer"; "" when none
};

/// Resets a statement when a use of it ends, however it ends.
class StatementUse {
 public:
  explicit StatementUse(Statement& statement) : statement_(statement) {}
  ~StatementUse() { statement_.reset(); }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;
  Statement* operator->() { return &statement_; }
  Statement& operator*() { return statement_; }

 private:
  Statement& statement_;
};

/// Opens `file` with SQLite's open `flags` (SQLITE_OPEN_READONLY, or READWRITE | CREATE), extended
/// result codes on and a busy timeout; an error names the file and `what` ("opening the pricing
/// database"), mapped as error() maps it. With a `file_system` the connection does its I/O through
/// an AdmittingVfs over it (which must outlive the connection); nullptr: SQLite's own VFS.
Result<Connection> open(const std::filesystem::path& file, int flags, std::chrono::milliseconds busy_timeout,
                        std::string_view what, FileSystem* file_system = nullptr);

/// Runs one or more SQL statements without results (schema changes, transaction control).
Status exec(sqlite3* db, const std::filesystem::path& file, const char* sql, std::string_view what);

/// Prepares a statement for repeated use (SQLITE_PREPARE_PERSISTENT).
Result<Statement> prepare(sqlite3* db, const std::filesystem::path& file, std::string_view sql);

/// The names of up to three tables of the database other than `except`, in name order and
/// comma-separated ("" when there is none): what a store that refuses another kind of database
/// names in its refusal.
Result<std::string> other_table_names(sqlite3* db, const std::filesystem::path& file, std::string_view except = {});

}  // namespace fleetcast::sqlite
