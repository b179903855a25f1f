// The real file system (POSIX calls), the one atomic file writer, and the fault-injecting file
// system the tests and the CLI's FLEETCAST_INJECT_FAULT use.
#include "fleetcast/file_system.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include "core/text.h"

namespace fleetcast {

namespace {

namespace fs = std::filesystem;

Status errno_error(const fs::path& path, std::string_view what, int error) {
  std::string message = path.string() + ": " + std::string(what) + ": " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) return {StatusCode::resource_exhausted, message + " (the disk is full)"};
  if (error == EACCES || error == EPERM || error == EROFS || error == ENOTDIR || error == EISDIR) {
    return permission_denied_error(message);
  }
  return data_loss_error(std::move(message));
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(fs::path path, int descriptor) : path_(std::move(path)), descriptor_(descriptor) {}
  ~PosixWritableFile() override {
    if (descriptor_ >= 0) ::close(descriptor_);
  }
  PosixWritableFile(const PosixWritableFile&) = delete;
  PosixWritableFile& operator=(const PosixWritableFile&) = delete;

  Status append(std::string_view bytes) override {
    while (!bytes.empty()) {
      const ssize_t written = ::write(descriptor_, bytes.data(), bytes.size());
      if (written < 0 && errno == EINTR) continue;
      if (written < 0) return errno_error(path_, "write failed", errno);
      bytes.remove_prefix(static_cast<std::size_t>(written));
    }
    return {};
  }
  Status sync() override {
    return ::fsync(descriptor_) == 0 ? Status{} : errno_error(path_, "fsync failed", errno);
  }
  Status close() override {
    const int descriptor = std::exchange(descriptor_, -1);
    return ::close(descriptor) == 0 ? Status{} : errno_error(path_, "close failed", errno);
  }

 private:
  fs::path path_;
  int descriptor_;
};

// Counts a plain file's writes and syncs against the plan before handing them to the real file.
class FaultInjectingWritableFile final : public WritableFile {
 public:
  FaultInjectingWritableFile(FaultInjectingFileSystem& faults, fs::path path, std::unique_ptr<WritableFile> base)
      : faults_(faults), path_(std::move(path)), base_(std::move(base)) {}

  Status append(std::string_view bytes) override {
    std::size_t fit = bytes.size();
    Status admitted = faults_.admit(FileOperation::write, path_, bytes.size(), &fit);
    if (!admitted.ok()) {
      (void)base_->append(bytes.substr(0, fit));  // a full disk still takes what fits: a torn file
      return admitted;
    }
    return base_->append(bytes);
  }
  Status sync() override {
    if (Status admitted = faults_.admit(FileOperation::sync, path_, 0); !admitted.ok()) return admitted;
    return base_->sync();
  }
  Status close() override { return base_->close(); }

 private:
  FaultInjectingFileSystem& faults_;
  fs::path path_;
  std::unique_ptr<WritableFile> base_;
};

// The folder an entry lives in, for syncing after the entry was created or renamed.
fs::path folder_of(const fs::path& path) {
  const fs::path parent = fs::absolute(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

std::string_view file_operation_name(FileOperation operation) noexcept {
  switch (operation) {
    case FileOperation::write:
      return "write";
    case FileOperation::sync:
      return "sync";
    case FileOperation::rename:
      return "rename";
    case FileOperation::truncate:
      return "truncate";
    case FileOperation::remove:
      return "remove";
  }
  return "unknown";
}

Status FileSystem::admit_database_io(FileOperation, const fs::path&, std::size_t) { return {}; }

Status FileSystem::write_whole_file(const fs::path& path, std::string_view contents, Sync sync) {
  auto file = create_file(path);
  if (!file.ok()) return file.status();
  if (Status status = (*file)->append(contents); !status.ok()) return status;
  if (sync == Sync::before_close) {
    if (Status status = (*file)->sync(); !status.ok()) return status;
  }
  return (*file)->close();
}

Result<std::unique_ptr<WritableFile>> PosixFileSystem::create_file(const fs::path& path) {
  const int descriptor = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (descriptor < 0) {
    return errno_error(path, "cannot create the file (is the folder there and writable?)", errno);
  }
  return std::unique_ptr<WritableFile>(std::make_unique<PosixWritableFile>(path, descriptor));
}

Status PosixFileSystem::create_folders(const fs::path& path) {
  std::error_code error;
  fs::create_directories(path, error);
  return error ? errno_error(path, "cannot create the folder", error.value()) : Status{};
}

Status PosixFileSystem::sync_folder(const fs::path& path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (descriptor < 0) return errno_error(path, "cannot open the folder to sync it", errno);
  const int synced = ::fsync(descriptor);
  const int error = errno;
  ::close(descriptor);
  return synced == 0 ? Status{} : errno_error(path, "fsync of the folder failed", error);
}

Status PosixFileSystem::rename(const fs::path& from, const fs::path& to) {
  return ::rename(from.c_str(), to.c_str()) == 0 ? Status{} : errno_error(to, "cannot move into place", errno);
}

Status PosixFileSystem::remove(const fs::path& path) {
  std::error_code error;
  fs::remove(path, error);
  return error ? errno_error(path, "cannot remove", error.value()) : Status{};
}

Status PosixFileSystem::remove_all(const fs::path& path) {
  std::error_code error;
  fs::remove_all(path, error);
  return error ? errno_error(path, "cannot remove", error.value()) : Status{};
}

namespace {

// Where a chain of symbolic links at `path` that ends in no file points (`path` itself when it is
// no link), so that writing through a dangling link creates the file it names and keeps the link.
// A link's relative target is read from the link's folder; a loop is cut after 40 links, as the
// kernel's ELOOP is.
fs::path through_links(fs::path path) {
  std::error_code error;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(path, error)); ++hops) {
    const fs::path target = fs::read_symlink(path, error);
    if (error) break;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

}  // namespace

Status write_file_atomically(const fs::path& requested, std::string_view contents, FileSystem* file_system) {
  PosixFileSystem posix;
  FileSystem& files = file_system != nullptr ? *file_system : posix;
  std::error_code error;
  const fs::file_status existing = fs::status(requested, error);  // through any links
  if (fs::exists(existing) && !fs::is_regular_file(existing) && !fs::is_directory(existing)) {
    // A device, pipe or socket already there (/dev/null, a FIFO, a terminal) cannot be replaced
    // by a rename, nor synced, and replacing it would destroy it: written into, through any links.
    return files.write_whole_file(requested, contents, FileSystem::Sync::never);
  }
  std::error_code unresolved;
  fs::path path = fs::exists(existing) ? fs::canonical(requested, unresolved) : through_links(requested);
  if (unresolved) path = requested;
  const fs::path temporary = path.string() + ".tmp." + std::to_string(::getpid());
  Status status = files.write_whole_file(temporary, contents);
  if (status.ok()) status = files.rename(temporary, path);
  if (!status.ok()) {
    (void)files.remove_all(temporary);
    return status;
  }
  // The rename is durable once the folder is; the new content is complete either way.
  Status synced = files.sync_folder(folder_of(path));
  return synced.ok() ? synced : synced.with_context(path.string() + ": written whole, but not yet durable");
}

Result<FaultPlan> parse_fault_plan(std::string_view text) {
  struct Form {
    std::string_view name;
    FaultPlan::Kind kind;
  };
  static constexpr Form kForms[] = {{"write", FaultPlan::Kind::write},       {"sync", FaultPlan::Kind::sync},
                                    {"rename", FaultPlan::Kind::rename},     {"truncate", FaultPlan::Kind::truncate},
                                    {"remove", FaultPlan::Kind::remove},     {"full", FaultPlan::Kind::disk_full}};
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  for (const Form& form : kForms) {
    if (colon == std::string_view::npos || name != form.name) continue;
    const std::optional<std::int64_t> at = text::parse_int64(text.substr(colon + 1));
    const std::int64_t least = form.kind == FaultPlan::Kind::disk_full ? 0 : 1;
    if (at && *at >= least) return FaultPlan{form.kind, *at};
  }
  return invalid_argument_error("fault plan '" + std::string(text) +
                                "': expected write:N, sync:N, rename:N, truncate:N, remove:N (N >= 1) or full:BYTES");
}

FaultInjectingFileSystem::FaultInjectingFileSystem(FileSystem& base, std::optional<FaultPlan> plan)
    : base_(base), plan_(plan) {}

Status FaultInjectingFileSystem::admit(FileOperation operation, const fs::path& file, std::size_t bytes,
                                       std::size_t* bytes_that_fit) {
  const std::int64_t nth = ++counts_[static_cast<std::size_t>(operation)];
  const bool disk_full = plan_ && plan_->kind == FaultPlan::Kind::disk_full;
  if (operation == FileOperation::write) {
    const auto size = static_cast<std::int64_t>(bytes);
    const std::int64_t before = bytes_written_.fetch_add(size);
    if (disk_full && before + size > plan_->at) {
      if (bytes_that_fit != nullptr) *bytes_that_fit = static_cast<std::size_t>(std::max<std::int64_t>(0, plan_->at - before));
      injected_ = true;
      return {StatusCode::resource_exhausted,
              file.string() + ": write failed: no space left on device (injected fault: the disk is full)"};
    }
  }
  if (!plan_ || disk_full || static_cast<int>(plan_->kind) != static_cast<int>(operation) || nth != plan_->at) {
    return {};
  }
  injected_ = true;
  return data_loss_error(file.string() + ": " + std::string(file_operation_name(operation)) +
                         " failed: input/output error (injected fault)");
}

Result<std::unique_ptr<WritableFile>> FaultInjectingFileSystem::create_file(const fs::path& path) {
  auto file = base_.create_file(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<WritableFile>(std::make_unique<FaultInjectingWritableFile>(*this, path, std::move(*file)));
}

Status FaultInjectingFileSystem::create_folders(const fs::path& path) { return base_.create_folders(path); }

Status FaultInjectingFileSystem::sync_folder(const fs::path& path) {
  if (Status admitted = admit(FileOperation::sync, path, 0); !admitted.ok()) return admitted;
  return base_.sync_folder(path);
}

Status FaultInjectingFileSystem::rename(const fs::path& from, const fs::path& to) {
  if (Status admitted = admit(FileOperation::rename, to, 0); !admitted.ok()) return admitted;
  return base_.rename(from, to);
}

Status FaultInjectingFileSystem::remove(const fs::path& path) {
  if (Status admitted = admit(FileOperation::remove, path, 0); !admitted.ok()) return admitted;
  return base_.remove(path);
}

// Cleaning up is not a step of the write, so it is neither counted nor failed.
Status FaultInjectingFileSystem::remove_all(const fs::path& path) { return base_.remove_all(path); }

Status FaultInjectingFileSystem::admit_database_io(FileOperation operation, const fs::path& file, std::size_t bytes) {
  return admit(operation, file, bytes);
}

std::int64_t FaultInjectingFileSystem::count(FileOperation operation) const {
  return counts_[static_cast<std::size_t>(operation)];
}
std::int64_t FaultInjectingFileSystem::bytes_written() const { return bytes_written_; }
bool FaultInjectingFileSystem::fault_injected() const { return injected_; }

}  // namespace fleetcast
