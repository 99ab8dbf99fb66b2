#include "core/engine/data/token_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/engine/errors.h"

namespace tunebench::engine {

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void SyntheticTokens::fill(uint64_t sample_id, int64_t* out, int64_t length) const {
  uint64_t state = mix64(m_seed * 0x2545F4914F6CDD1DULL + sample_id);
  for (int64_t i = 0; i < length; ++i) {
    state = mix64(state);
    out[i] = static_cast<int64_t>(state % static_cast<uint64_t>(m_vocab));
  }
}

TokenFile::TokenFile(const std::string& path, config::TokenDtype dtype, uint64_t seed, int64_t vocab, int64_t window)
    : m_dtype(dtype), m_seed(seed), m_vocab(vocab) {
  auto fail = [&](const std::string& why) {
    return EngineError("config", protocol::kExitConfig, "token file " + path + ": " + why);
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw fail(std::strerror(errno));
  }
  const size_t elem = dtype == config::TokenDtype::Uint16 ? 2 : 4;
  m_bytes = static_cast<size_t>(st.st_size);
  if (m_bytes == 0 || m_bytes % elem != 0) {
    ::close(fd);
    throw fail("size " + std::to_string(m_bytes) + " is not a non-zero multiple of " + std::to_string(elem) + " bytes");
  }
  m_tokens = static_cast<int64_t>(m_bytes / elem);
  if (m_tokens <= window) {
    ::close(fd);
    throw fail("holds " + std::to_string(m_tokens) + " tokens, fewer than one window of " + std::to_string(window + 1));
  }
  m_data = ::mmap(nullptr, m_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m_data == MAP_FAILED) {
    m_data = nullptr;
    throw fail(std::string("mmap failed: ") + std::strerror(errno));
  }
}

TokenFile::~TokenFile() {
  if (m_data) ::munmap(const_cast<void*>(m_data), m_bytes);
}

void TokenFile::fill(uint64_t sample_id, int64_t* out, int64_t length) const {
  const uint64_t starts = static_cast<uint64_t>(m_tokens - length + 1);
  const uint64_t start = mix64(m_seed * 0x9E3779B97F4A7C15ULL + sample_id) % starts;
  for (int64_t i = 0; i < length; ++i) {
    int64_t tok;
    if (m_dtype == config::TokenDtype::Uint16) {
      uint16_t v;
      std::memcpy(&v, static_cast<const char*>(m_data) + (start + i) * 2, 2);
      tok = v;
    } else {
      uint32_t v;
      std::memcpy(&v, static_cast<const char*>(m_data) + (start + i) * 4, 4);
      tok = v;
    }
    if (tok >= m_vocab)
      throw EngineError("config", protocol::kExitConfig,
                        "token file holds token id " + std::to_string(tok) + " but the model's vocabulary is " +
                            std::to_string(m_vocab) + "; check token_dtype and the model preset");
    out[i] = tok;
  }
}

std::unique_ptr<TokenSource> make_token_source(const config::TrialConfig& c) {
  if (c.data == config::DataSource::File)
    return std::make_unique<TokenFile>(c.data_path, c.token_dtype, c.seed, c.dims.vocab, c.seq_len);
  return std::make_unique<SyntheticTokens>(c.seed, c.dims.vocab);
}

uint64_t spend_cpu(const int64_t* tokens, int64_t length, double microseconds) {
  if (microseconds <= 0) return 0;
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double, std::micro>(microseconds));
  uint64_t h = 0;
  do {
    for (int round = 0; round < 16; ++round)
      for (int64_t i = 0; i < length; ++i) h = mix64(h ^ static_cast<uint64_t>(tokens[i]));
  } while (clock::now() < deadline);
  return h;
}

}  // namespace tunebench::engine
