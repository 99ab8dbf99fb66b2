// Base64 as the report's data block uses it: round trips, line breaks, and a strict, bounded decoder.
#include "core/report/base64.h"

#include <gtest/gtest.h>

namespace tr = tunebench::report;

TEST(Base64, RoundTripsEveryLengthAndByte) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) bytes += static_cast<char>(i * 7 + 3);
  for (size_t n = 0; n <= bytes.size(); n += 1) {
    const auto text = tr::base64_encode(bytes.substr(0, n), n % 2 ? 76 : 0);
    const auto back = tr::base64_decode(text, bytes.size());
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(*back, bytes.substr(0, n));
  }
  EXPECT_EQ(tr::base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(tr::base64_encode("fo"), "Zm8=");
  EXPECT_EQ(tr::base64_encode("f"), "Zg==");
}

TEST(Base64, BreaksLinesAndSkipsWhitespaceWhenDecoding) {
  const auto text = tr::base64_encode(std::string(100, 'x'), 10);
  EXPECT_EQ(text.find('\n'), 10u);
  EXPECT_EQ(*tr::base64_decode(" \r\n" + text + "\n\t", 1000), std::string(100, 'x'));
}

TEST(Base64, RefusesWhatIsNotBase64OrTooLong) {
  EXPECT_FALSE(tr::base64_decode("Zm9v!mFy", 100));    // outside the alphabet
  EXPECT_FALSE(tr::base64_decode("Zm9", 100));         // not whole quads
  EXPECT_FALSE(tr::base64_decode("Zg==Zg==", 100));    // data after padding
  EXPECT_FALSE(tr::base64_decode("Z===", 100));        // too much padding
  EXPECT_FALSE(tr::base64_decode("=Zg=", 100));        // padding first
  EXPECT_FALSE(tr::base64_decode("Zm9vYmFy", 5));      // over the bound
  EXPECT_TRUE(tr::base64_decode("Zm9vYmFy", 6));
  EXPECT_EQ(*tr::base64_decode("", 0), "");
}
