// The SQLite VFS through which a database opened with a FileSystem does its I/O: SQLite's default
// VFS underneath, with every write, sync, truncation and deletion first offered to
// FileSystem::admit_database_io. A refused operation fails as the disk would (SQLITE_FULL or the
// operation's SQLITE_IOERR_* code), so SQLite's own recovery is what is exercised.
//
// One VFS per connection, registered under a name unique to it and unregistered when the
// connection closes: SQLite keeps its VFS list process-wide, but nothing of ours is.
#include "core/sqlite_vfs.h"

#include <cstdio>

namespace fleetcast::sqlite {

namespace {

// A file opened through the VFS: SQLite allocates szOsFile bytes, this header then the default
// VFS's own file object.
struct AdmittingFile {
  sqlite3_file base;
  AdmittingVfs* vfs;
  const char* name;  // SQLite keeps it valid until xClose; null for temporary files
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
static_assert(sizeof(AdmittingFile) % 8 == 0, "the default VFS's file object must stay aligned");

AdmittingFile* admitting(sqlite3_file* file) { return reinterpret_cast<AdmittingFile*>(file); }
sqlite3_file* real(sqlite3_file* file) { return admitting(file)->real(); }

int file_close(sqlite3_file* file) { return real(file)->pMethods->xClose(real(file)); }
int file_read(sqlite3_file* file, void* buffer, int amount, sqlite3_int64 offset) {
  return real(file)->pMethods->xRead(real(file), buffer, amount, offset);
}
int file_write(sqlite3_file* file, const void* buffer, int amount, sqlite3_int64 offset) {
  AdmittingFile* self = admitting(file);
  const int admitted = self->vfs->admit(FileOperation::write, self->name, static_cast<std::size_t>(amount),
                                        SQLITE_IOERR_WRITE);
  return admitted != SQLITE_OK ? admitted : real(file)->pMethods->xWrite(real(file), buffer, amount, offset);
}
int file_truncate(sqlite3_file* file, sqlite3_int64 size) {
  AdmittingFile* self = admitting(file);
  const int admitted = self->vfs->admit(FileOperation::truncate, self->name, 0, SQLITE_IOERR_TRUNCATE);
  return admitted != SQLITE_OK ? admitted : real(file)->pMethods->xTruncate(real(file), size);
}
int file_sync(sqlite3_file* file, int flags) {
  AdmittingFile* self = admitting(file);
  const int admitted = self->vfs->admit(FileOperation::sync, self->name, 0, SQLITE_IOERR_FSYNC);
  return admitted != SQLITE_OK ? admitted : real(file)->pMethods->xSync(real(file), flags);
}
int file_size(sqlite3_file* file, sqlite3_int64* size) { return real(file)->pMethods->xFileSize(real(file), size); }
int file_lock(sqlite3_file* file, int lock) { return real(file)->pMethods->xLock(real(file), lock); }
int file_unlock(sqlite3_file* file, int lock) { return real(file)->pMethods->xUnlock(real(file), lock); }
int file_check_reserved_lock(sqlite3_file* file, int* out) {
  return real(file)->pMethods->xCheckReservedLock(real(file), out);
}
int file_control(sqlite3_file* file, int op, void* argument) {
  return real(file)->pMethods->xFileControl(real(file), op, argument);
}
int file_sector_size(sqlite3_file* file) { return real(file)->pMethods->xSectorSize(real(file)); }
int file_device_characteristics(sqlite3_file* file) {
  return real(file)->pMethods->xDeviceCharacteristics(real(file));
}
int file_shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** memory) {
  return real(file)->pMethods->xShmMap(real(file), region, size, extend, memory);
}
int file_shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  return real(file)->pMethods->xShmLock(real(file), offset, n, flags);
}
void file_shm_barrier(sqlite3_file* file) { real(file)->pMethods->xShmBarrier(real(file)); }
int file_shm_unmap(sqlite3_file* file, int delete_flag) { return real(file)->pMethods->xShmUnmap(real(file), delete_flag); }
int file_fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** pages) {
  return real(file)->pMethods->xFetch(real(file), offset, amount, pages);
}
int file_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  return real(file)->pMethods->xUnfetch(real(file), offset, page);
}

int vfs_open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  AdmittingVfs& self = AdmittingVfs::of(vfs);
  AdmittingFile* opened = admitting(file);
  opened->vfs = &self;
  opened->name = name;
  const int rc = self.real()->xOpen(self.real(), name, opened->real(), flags, out_flags);
  opened->base.pMethods = opened->real()->pMethods != nullptr ? self.methods() : nullptr;
  return rc;
}
int vfs_delete(sqlite3_vfs* vfs, const char* name, int sync_folder) {
  AdmittingVfs& self = AdmittingVfs::of(vfs);
  const int admitted = self.admit(FileOperation::remove, name, 0, SQLITE_IOERR_DELETE);
  return admitted != SQLITE_OK ? admitted : self.real()->xDelete(self.real(), name, sync_folder);
}
int vfs_access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return AdmittingVfs::of(vfs).real()->xAccess(AdmittingVfs::of(vfs).real(), name, flags, out);
}
int vfs_full_pathname(sqlite3_vfs* vfs, const char* name, int size, char* out) {
  return AdmittingVfs::of(vfs).real()->xFullPathname(AdmittingVfs::of(vfs).real(), name, size, out);
}
void* vfs_dl_open(sqlite3_vfs* vfs, const char* name) {
  return AdmittingVfs::of(vfs).real()->xDlOpen(AdmittingVfs::of(vfs).real(), name);
}
void vfs_dl_error(sqlite3_vfs* vfs, int size, char* out) {
  AdmittingVfs::of(vfs).real()->xDlError(AdmittingVfs::of(vfs).real(), size, out);
}
void (*vfs_dl_sym(sqlite3_vfs* vfs, void* library, const char* symbol))() {
  return AdmittingVfs::of(vfs).real()->xDlSym(AdmittingVfs::of(vfs).real(), library, symbol);
}
void vfs_dl_close(sqlite3_vfs* vfs, void* library) {
  AdmittingVfs::of(vfs).real()->xDlClose(AdmittingVfs::of(vfs).real(), library);
}
int vfs_randomness(sqlite3_vfs* vfs, int size, char* out) {
  return AdmittingVfs::of(vfs).real()->xRandomness(AdmittingVfs::of(vfs).real(), size, out);
}
int vfs_sleep(sqlite3_vfs* vfs, int microseconds) {
  return AdmittingVfs::of(vfs).real()->xSleep(AdmittingVfs::of(vfs).real(), microseconds);
}
int vfs_current_time(sqlite3_vfs* vfs, double* out) {
  return AdmittingVfs::of(vfs).real()->xCurrentTime(AdmittingVfs::of(vfs).real(), out);
}
int vfs_get_last_error(sqlite3_vfs* vfs, int size, char* out) {
  return AdmittingVfs::of(vfs).real()->xGetLastError(AdmittingVfs::of(vfs).real(), size, out);
}
int vfs_current_time_int64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return AdmittingVfs::of(vfs).real()->xCurrentTimeInt64(AdmittingVfs::of(vfs).real(), out);
}

}  // namespace

AdmittingVfs::AdmittingVfs(FileSystem& files, sqlite3_vfs* real) : files_(files), real_(real) {
  std::snprintf(name_, sizeof name_, "fleetcast-admitting-%p", static_cast<void*>(this));
  methods_ = {3,          file_close,        file_read,          file_write,
              file_truncate, file_sync,      file_size,          file_lock,
              file_unlock,   file_check_reserved_lock, file_control, file_sector_size,
              file_device_characteristics, file_shm_map, file_shm_lock, file_shm_barrier,
              file_shm_unmap, file_fetch,    file_unfetch};
  vfs_ = {2,
          static_cast<int>(sizeof(AdmittingFile)) + real->szOsFile,
          real->mxPathname,
          nullptr,
          name_,
          this,
          vfs_open,
          vfs_delete,
          vfs_access,
          vfs_full_pathname,
          vfs_dl_open,
          vfs_dl_error,
          vfs_dl_sym,
          vfs_dl_close,
          vfs_randomness,
          vfs_sleep,
          vfs_current_time,
          vfs_get_last_error,
          vfs_current_time_int64,
          nullptr,
          nullptr,
          nullptr};
  registered_ = sqlite3_vfs_register(&vfs_, 0) == SQLITE_OK;
}

Result<std::shared_ptr<AdmittingVfs>> make_admitting_vfs(FileSystem& files, const std::filesystem::path& file) {
  sqlite3_vfs* real = sqlite3_vfs_find(nullptr);
  if (real == nullptr) return internal_error(file.string() + ": SQLite has no default VFS");
  auto vfs = std::make_shared<AdmittingVfs>(files, real);
  if (!vfs->registered()) return internal_error(file.string() + ": cannot register the file-system VFS");
  return vfs;
}

void ConnectionCloser::operator()(sqlite3* db) const noexcept {
  if (sqlite3_close(db) == SQLITE_OK) return;
  // A statement outlives the connection: SQLite closes it when the statement goes, still using
  // the VFS, so the VFS must never be freed (a leak, only after a bug elsewhere).
  sqlite3_close_v2(db);
  if (vfs) static_cast<void>(new std::shared_ptr<AdmittingVfs>(vfs));
}

}  // namespace fleetcast::sqlite
