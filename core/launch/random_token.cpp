#include "core/launch/random_token.h"

#include <sys/random.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

namespace tunebench::launch {

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("no randomness from the kernel (getrandom)");
    }
    got += size_t(n);
  }
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : raw) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

}  // namespace tunebench::launch
