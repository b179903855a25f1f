// The pricing database schema and its versioned migrations (PRAGMA user_version).
//
// Migration N takes a database from version N-1 to N. A database at an older version is
// upgraded in place, in one transaction with the caller's; a newer one is refused, since this
// build cannot know what a newer schema means.
//
// Thread-safety: functions on one connection, which the caller owns exclusively.
#pragma once

#include <filesystem>

#include <sqlite3.h>

#include "fleetcast/status.h"

namespace fleetcast::pricing::schema {

/// The version the newest migration produces.
int latest_version() noexcept;

/// The database's PRAGMA user_version. data_loss when the file is not a SQLite database.
Result<int> read_version(sqlite3* db, const std::filesystem::path& file);

/// Applies migrations from the current version up to `target` (<= latest_version()), inside the
/// caller's transaction. failed_precondition when the database is newer than `target`.
Status migrate(sqlite3* db, const std::filesystem::path& file, int target);

/// The message for a database newer than this build.
Status newer_version_error(const std::filesystem::path& file, int version);

}  // namespace fleetcast::pricing::schema
