#include "core/sqlite.h"

#include "core/sqlite_vfs.h"

namespace fleetcast::sqlite {

Status error(int rc, sqlite3* db, const std::filesystem::path& file, std::string_view what) {
  const std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  const std::string message = file.string() + ": " + std::string(what) + ": " + detail;
  switch (rc & 0xff) {  // the primary code; extended codes refine it
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return unavailable_error(message + " (another process holds the database; try again when it is done)");
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return permission_denied_error(message);
    case SQLITE_NOTADB:  // a file of another kind given where a database belongs: wrong input
      return failed_precondition_error(message + " (the file is not a SQLite database)");
    case SQLITE_CORRUPT:
      return data_loss_error(message + " (the database is damaged)");
    case SQLITE_FULL:
      return {StatusCode::resource_exhausted, message + " (the disk is full)"};
    case SQLITE_CANTOPEN:
      return not_found_error(message);
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
      return invalid_argument_error(message);
    default:
      return internal_error(message);
  }
}

void Statement::expect(int column, bool matches, const char* expected) const {
  if (matches || !mismatch_.empty()) return;
  static constexpr const char* kStorage[] = {"", "an integer", "a real number", "text", "a blob", "NULL"};
  const int storage_class = storage(column);
  const char* found = storage_class >= 1 && storage_class <= 5 ? kStorage[storage_class] : "a value";
  const char* name = sqlite3_column_name(stmt_, column);
  mismatch_ = "column '" + std::string(name != nullptr ? name : "?") + "' holds " + found;
  if (storage_class != SQLITE_NULL && storage_class != SQLITE_BLOB) mismatch_ += " '" + raw_text(column).substr(0, 40) + "'";
  mismatch_ += std::string(", expected ") + expected;
}

Status Statement::value_error(std::string_view what) const {
  if (mismatch_.empty()) return {};
  return failed_precondition_error(file_->string() + ": " + std::string(what) + ": " + mismatch_ +
                         " (the database holds a value fleetcast never writes there: edited by hand, or written "
                         "by another program; correct the row or import again into a new database)");
}

Result<Connection> open(const std::filesystem::path& file, int flags, std::chrono::milliseconds busy_timeout,
                        std::string_view what, FileSystem* file_system) {
  // SQLite opens a private temporary database for "" and an in-memory one for ":memory:": a
  // database fleetcast writes to is a file, and what it wrote would vanish on close.
  if (file.empty() || file == ":memory:") {
    return invalid_argument_error("'" + file.string() + "': expected the path of a database file (" + std::string(what) + ")");
  }
  // SQLite says only "unable to open database file" for a folder.
  if (std::error_code error; std::filesystem::is_directory(file, error)) {
    return invalid_argument_error(file.string() + ": is a directory, expected a database file (" + std::string(what) + ")");
  }
  std::shared_ptr<AdmittingVfs> vfs;
  if (file_system != nullptr) {
    auto made = make_admitting_vfs(*file_system, file);
    if (!made.ok()) return made.status();
    vfs = std::move(*made);
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, flags, vfs ? vfs->name() : nullptr);
  Connection connection(raw, ConnectionCloser{vfs});  // closed on every path, even when the open failed
  if (rc != SQLITE_OK) return error(rc, raw, file, what);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(busy_timeout.count()));
  return connection;
}

Status exec(sqlite3* db, const std::filesystem::path& file, const char* sql, std::string_view what) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status{} : error(rc, db, file, what);
}

Result<Statement> prepare(sqlite3* db, const std::filesystem::path& file, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                    &stmt, nullptr);
  if (rc != SQLITE_OK) return error(rc, db, file, "preparing a query");
  return Statement(db, stmt, &file);
}

Result<std::string> other_table_names(sqlite3* db, const std::filesystem::path& file, std::string_view except) {
  auto tables = prepare(db, file, "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> ?1 ORDER BY name LIMIT 3");
  if (!tables.ok()) return tables.status();
  tables->bind(1, except);
  std::string names;
  for (;;) {
    Result<bool> row = tables->step("reading the database's tables");
    if (!row.ok()) return row.status();
    if (!*row) return names;
    names += (names.empty() ? "" : ", ") + tables->text(0);
  }
}

}  // namespace fleetcast::sqlite
