#include "core/report/embedded_session.h"

#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>

#include "core/report/base64.h"
#include "core/store/event_log_import.h"
#include "core/store/file_guard.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"

namespace tunebench::report {

namespace {

using store::StoreError;

// A private folder under $TMPDIR (or /tmp) for the session copy, removed with what is in it.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tunebench-report-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw StoreError("cannot create a temporary folder for the report's session copy");
    m_path = pattern;
  }
  ~ScratchDir() {
    for (const auto& f : m_files)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((f + suffix).c_str());
    ::rmdir(m_path.c_str());
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) {
    m_files.push_back(m_path + "/" + name);
    return m_files.back();
  }

 private:
  std::string m_path;
  std::vector<std::string> m_files;
};

std::string size_text(int64_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

std::string read_file(const std::string& path, int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StoreError("cannot read " + path);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw StoreError("cannot read " + path);
  if (size > max_bytes)
    throw StoreError(path + " is larger than a report can be (" + size_text(max_bytes) + ")");
  in.seekg(0);
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), size);
  if (!in) throw StoreError("cannot read " + path);
  return bytes;
}

std::string deflate_bytes(const std::string& bytes) {
  uLongf size = compressBound(static_cast<uLong>(bytes.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(bytes.data()),
                static_cast<uLong>(bytes.size()), Z_BEST_COMPRESSION) != Z_OK)
    throw StoreError("cannot compress the report's session copy");
  out.resize(size);
  return out;
}

// Inflates `data` into `path`, refusing more than `max_bytes` or a stream that does not end where
// the data does.
void inflate_to_file(std::string_view data, const std::string& path, int64_t max_bytes) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw StoreError("cannot decompress the report's session");
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw StoreError("cannot write the report's session to a temporary file");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  char buffer[1 << 16];
  int64_t written = 0;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) throw StoreError("the report's embedded session is cut short");
    if (rc != Z_OK && rc != Z_STREAM_END) throw StoreError("the report's embedded session is damaged (zlib)");
    const size_t n = sizeof buffer - z.avail_out;
    written += static_cast<int64_t>(n);
    if (written > max_bytes)
      throw StoreError("the report's embedded session is larger than " + size_text(max_bytes));
    out.write(buffer, static_cast<std::streamsize>(n));
    if (rc == Z_STREAM_END) break;
    if (n == 0 && z.avail_in == 0) throw StoreError("the report's embedded session is cut short");
  }
  if (z.avail_in != 0) throw StoreError("the report's embedded session has data after its end");
  out.close();
  if (!out) throw StoreError("cannot write the report's session to a temporary file");
}

std::string block_start() { return "<script type=\"" + std::string(kDataBlockType) + "\""; }

}  // namespace

std::string session_data_block(const std::vector<store::LoadedTrial>& trials, const std::string& session_name) {
  ScratchDir dir;
  const std::string work = dir.file("work.tbsession"), copy = dir.file("copy.tbsession");
  {
    auto session = store::SessionStore::create(work, session_name);
    store::import_loaded_trials(session, trials, "");
    session.save_as(copy);  // compact, one file, no -wal
  }
  const std::string bytes = read_file(copy, kMaxEmbeddedSessionBytes);
  const std::string packed = base64_encode(deflate_bytes(bytes), 100);
  return block_start() + " id=\"tunebench-session\" data-encoding=\"zlib+base64\" data-bytes=\"" +
         std::to_string(bytes.size()) + "\">\n" + packed + "\n</script>\n";
}

bool is_report_file(const std::string& path) {
  // The file may be a session this process has open (a drop on the window is offered to every
  // importer): read it through the store, which keeps the session's locks (issue 43).
  std::string head;
  try {
    head = store::read_file_prefix(path, 4096);
  } catch (const StoreError&) {
    return false;
  }
  return head.find("<meta name=\"generator\" content=\"" + std::string(kGeneratorMeta) + "\"") != std::string::npos;
}

EmbeddedSession read_embedded_session(std::string_view html, int64_t max_session_bytes) {
  if (static_cast<int64_t>(html.size()) > kMaxReportFileBytes)
    throw StoreError("the file is larger than a report can be");
  // Text a report shows is escaped ('<' as &lt;), so the first literal start tag is the block.
  const size_t start = html.find(block_start());
  if (start == std::string_view::npos)
    throw StoreError("it carries no Tunebench session (a report written with an older version, or another HTML file)");
  const size_t open_end = html.find('>', start);
  if (open_end == std::string_view::npos) throw StoreError("its session block is cut short");
  const size_t close = html.find("</script>", open_end);
  if (close == std::string_view::npos) throw StoreError("its session block is cut short");
  const std::string_view text = html.substr(open_end + 1, close - open_end - 1);
  const auto packed = base64_decode(text, text.size());
  if (!packed || packed->empty()) throw StoreError("its session block is damaged (not base64)");

  ScratchDir dir;
  const std::string path = dir.file("embedded.tbsession");
  inflate_to_file(*packed, path, max_session_bytes);
  store::SessionStore::OpenOptions options;
  options.mode = store::SessionStore::Mode::ReadOnly;
  options.max_file_bytes = max_session_bytes;
  options.busy_timeout = std::chrono::milliseconds(0);
  EmbeddedSession out;
  try {
    const auto session = store::SessionStore::open(path, options);
    out.session_name = session.info().name;
    for (const auto& info : session.list_trials()) out.trials.push_back(session.load_trial(info.id));
  } catch (const StoreError& e) {
    // The store names the temporary file; the user knows the report.
    std::string what = e.what();
    if (const size_t at = what.find(path); at != std::string::npos) what.replace(at, path.size(), "its session");
    throw StoreError("its embedded session was refused: " + what);
  }
  return out;
}

EmbeddedSession read_embedded_session_file(const std::string& path) {
  try {
    return read_embedded_session(read_file(path, kMaxReportFileBytes));
  } catch (const StoreError& e) {
    const std::string what = e.what();
    if (what.rfind(path, 0) == 0 || what.rfind("cannot read", 0) == 0) throw;
    throw StoreError(path + ": " + what);
  }
}

store::ImportResult import_report(store::SessionStore& target, const std::string& html_path) {
  const EmbeddedSession embedded = read_embedded_session_file(html_path);
  if (embedded.trials.empty()) throw StoreError(html_path + ": the report carries no trials");
  const auto slash = html_path.find_last_of('/');
  return store::import_loaded_trials(target, embedded.trials,
                                     "report: " + (slash == std::string::npos ? html_path : html_path.substr(slash + 1)));
}

}  // namespace tunebench::report
