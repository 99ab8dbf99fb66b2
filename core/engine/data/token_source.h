// Where training tokens come from: synthetic random tokens (default) or random windows of a token
// file in the nanoGPT .bin layout (a flat little-endian uint16/uint32 array, memory-mapped).
// Every sample is a pure function of (seed, sample id), so a rank's batches are reproducible and
// the DataLoader's threads can fill samples in any order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/config/trial_config.h"

namespace tunebench::engine {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // Writes `length` token ids of sample `sample_id` to `out`. Thread-safe.
  virtual void fill(uint64_t sample_id, int64_t* out, int64_t length) const = 0;
};

class SyntheticTokens final : public TokenSource {
 public:
  SyntheticTokens(uint64_t seed, int64_t vocab) : m_seed(seed), m_vocab(vocab) {}
  void fill(uint64_t sample_id, int64_t* out, int64_t length) const override;

 private:
  uint64_t m_seed;
  int64_t m_vocab;
};

class TokenFile final : public TokenSource {
 public:
  // Maps the file read-only. Throws EngineError(config) when it cannot be opened, is empty, is
  // shorter than one window, or its size is not a multiple of the element size.
  TokenFile(const std::string& path, config::TokenDtype dtype, uint64_t seed, int64_t vocab, int64_t window);
  ~TokenFile() override;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;
  // Throws EngineError(config) on a token id >= vocab (the file does not fit the model).
  void fill(uint64_t sample_id, int64_t* out, int64_t length) const override;
  int64_t tokens() const { return m_tokens; }

 private:
  const void* m_data = nullptr;
  size_t m_bytes = 0;
  int64_t m_tokens = 0;
  config::TokenDtype m_dtype;
  uint64_t m_seed;
  int64_t m_vocab;
};

std::unique_ptr<TokenSource> make_token_source(const config::TrialConfig& config);

// 64-bit mixer (splitmix64 finaliser): the hash behind every pseudo-random choice above.
uint64_t mix64(uint64_t x);

// Burns `microseconds` of real CPU work (hashing `tokens`), standing in for tokenisation and
// augmentation. Returns the hash so the compiler cannot drop the work.
uint64_t spend_cpu(const int64_t* tokens, int64_t length, double microseconds);

}  // namespace tunebench::engine
