// File checks in the order that touches the least: stat, raw header, then SQLite read-only.
#include "core/store/file_guard.h"

#include <sys/stat.h>

#include <sqlite3.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/store/connection.h"
#include "core/store/schema.h"
#include "core/store/store_error.h"

namespace tunebench::store {
namespace {

constexpr size_t kHeaderBytes = 100;
constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string newer_message(const std::string& path, int version) {
  return path + " was written by a newer Tunebench (session schema " + std::to_string(version) +
         "; this build reads up to " + std::to_string(kSchemaVersion) +
         "). Update Tunebench to open it; the file was not changed.";
}

std::string describe_difference(const std::vector<SchemaObject>& found,
                                const std::vector<SchemaObject>& expected) {
  for (const auto& o : found) {
    auto same_name = std::find_if(expected.begin(), expected.end(),
                                  [&](const SchemaObject& e) { return e.name == o.name; });
    if (o.type == "trigger" || o.type == "view")
      return "it contains a " + o.type + " '" + o.name + "' that Tunebench does not create";
    if (same_name == expected.end())
      return "it contains a " + o.type + " '" + o.name + "' that Tunebench does not create";
    if (!(*same_name == o)) return "its " + o.type + " '" + o.name + "' differs from Tunebench's";
  }
  for (const auto& e : expected) {
    auto it = std::find_if(found.begin(), found.end(),
                           [&](const SchemaObject& o) { return o.name == e.name; });
    if (it == found.end()) return "its " + e.type + " '" + e.name + "' is missing";
  }
  return "its schema differs from Tunebench's";
}

}  // namespace

std::string read_file_prefix(const std::string& path, size_t max_bytes) {
  // Through SQLite's own file layer, never a descriptor of ours: POSIX drops every lock a process
  // holds on a file when any descriptor of it is closed, so an ifstream here would strip the locks
  // of this process's live connections to the same session; another process closing the session
  // last would then delete the -wal and -shm under them (issue 43). SQLite's unix layer knows its
  // connections' locks and keeps such a descriptor open until they are released.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw StoreError("cannot open " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw StoreError(path + " is not a regular file");  // a FIFO would block
  sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
  if (!vfs) throw StoreError("cannot open " + path + ": SQLite has no file layer");
  using Filename = std::unique_ptr<const char, decltype(&sqlite3_free_filename)>;
  const Filename name(sqlite3_create_filename(path.c_str(), "", "", 0, nullptr), &sqlite3_free_filename);
  using File = std::unique_ptr<sqlite3_file, decltype(&sqlite3_free)>;
  const File file(static_cast<sqlite3_file*>(sqlite3_malloc(vfs->szOsFile)), &sqlite3_free);
  if (!name || !file) throw StoreError("cannot open " + path + ": out of memory");
  std::memset(file.get(), 0, static_cast<size_t>(vfs->szOsFile));
  int flags = 0;
  const int opened = vfs->xOpen(vfs, name.get(), file.get(), SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB, &flags);
  struct Closer {
    sqlite3_file* f;
    ~Closer() {
      if (f->pMethods) f->pMethods->xClose(f);
    }
  } closer{file.get()};
  if (opened != SQLITE_OK) throw StoreError("cannot open " + path + ": " + describe_sqlite_error(opened), std::string("SQLite: ") + sqlite3_errstr(opened));
  sqlite3_int64 size = 0;
  if (file->pMethods->xFileSize(file.get(), &size) != SQLITE_OK) throw StoreError("cannot read " + path);
  std::string bytes(std::min<size_t>(max_bytes, static_cast<size_t>(std::max<sqlite3_int64>(size, 0))), '\0');
  if (!bytes.empty() &&
      file->pMethods->xRead(file.get(), bytes.data(), static_cast<int>(bytes.size()), 0) != SQLITE_OK)
    throw StoreError("cannot read " + path);
  return bytes;
}

FileHeader check_file_header(const std::string& path, int64_t max_file_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw StoreError("cannot open " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw StoreError(path + " is not a regular file");
  FileHeader h;
  h.size_bytes = static_cast<int64_t>(st.st_size);
  if (h.size_bytes == 0) throw StoreError(path + " is empty, not a Tunebench session");
  if (h.size_bytes > max_file_bytes)
    throw StoreError(path + " is " + std::to_string(h.size_bytes >> 20) +
                     " MiB, larger than the " + std::to_string(max_file_bytes >> 20) +
                     " MiB limit for session files");

  unsigned char b[kHeaderBytes] = {};
  const std::string head = read_file_prefix(path, kHeaderBytes);
  std::memcpy(b, head.data(), head.size());
  const size_t got = head.size();
  if (got < sizeof kMagic || std::memcmp(b, kMagic, sizeof kMagic) != 0)
    throw StoreError(path + " is not a Tunebench session (not an SQLite database at all)");
  if (got < kHeaderBytes) throw StoreError(path + " is truncated (shorter than an SQLite header)");

  uint32_t page_size = (uint32_t{b[16]} << 8) | b[17];
  if (page_size == 1) page_size = 65536;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0)
    throw StoreError(path + " is damaged (invalid page size in its header)");
  const uint32_t change_counter = be32(b + 24);
  const uint32_t page_count = be32(b + 28);
  const uint32_t valid_for = be32(b + 92);
  // The in-header page count is only meaningful when valid_for matches the change counter.
  const bool count_valid = page_count > 0 && valid_for == change_counter;
  // With a non-empty -wal beside it (a writer was killed), a checkpoint may have been cut off
  // after page 1 was written but before the file grew; SQLite recovers that from the WAL, so the
  // size check is left to quick_check in that case.
  struct stat wal {};
  const bool wal_pending = ::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
  if (!wal_pending && (h.size_bytes % page_size != 0 ||
                       (count_valid && h.size_bytes < int64_t{page_count} * page_size)))
    throw StoreError(path + " is truncated: it ends in the middle of its data (" +
                     std::to_string(h.size_bytes) + " bytes, expected " +
                     std::to_string(int64_t{page_count} * page_size) + ")");

  h.user_version = static_cast<int32_t>(be32(b + 60));
  h.application_id = static_cast<int32_t>(be32(b + 68));
  if (h.application_id != kApplicationId)
    throw StoreError(path + " is an SQLite database of another program, not a Tunebench session");
  if (h.user_version > kSchemaVersion) throw StoreError(newer_message(path, h.user_version));
  if (h.user_version < 1)
    throw StoreError(path + " is an unfinished Tunebench session (no schema version)");
  return h;
}

int check_session_database(SQLite::Database& db, const std::string& path, bool full_check) {
  int version = 0;
  try {
    // quick_check reads every page: O(file size), but it is what catches a damaged file before
    // the GUI shows half a trial. Its first row is "ok" or the first problem found.
    if (full_check) {
      SQLite::Statement q(db, "PRAGMA quick_check(1)");
      if (q.executeStep()) {
        const std::string result = q.getColumn(0).getString();
        // SQLite's own report ("*** in database main *** Page 13: ...") means nothing to a user.
        if (result != "ok")
          throw StoreError(path + " is damaged: its pages fail SQLite's integrity check. It was not opened or "
                                  "changed; open a backup, or ask its sender for the file again.",
                           "SQLite's integrity check: " + result);
      }
    }
    const int app_id = db.execAndGet("PRAGMA application_id").getInt();
    version = db.execAndGet("PRAGMA user_version").getInt();
    if (app_id != kApplicationId)
      throw StoreError(path + " is an SQLite database of another program, not a Tunebench session");
    if (version > kSchemaVersion) throw StoreError(newer_message(path, version));
    if (version < 1)
      throw StoreError(path + " is an unfinished Tunebench session (no schema version)");
    const auto found = read_schema(db);
    const auto& expected = expected_schema(version);
    if (found != expected)
      throw StoreError(path + " is not a session Tunebench can trust: " +
                       describe_difference(found, expected) + ". It was not opened.");
  } catch (const SQLite::Exception& e) {
    if (is_locked_error(e.getErrorCode()))
      throw StoreError(path + " is locked by another program; close it there or try again in a moment. The "
                              "file was not changed.");
    throw sqlite_failure(path + " cannot be opened", e, " It was not changed.");
  }
  return version;
}

}  // namespace tunebench::store
