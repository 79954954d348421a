// The size syntax every command takes (`-s 64KiB`, `--sizes 1KiB..1GiB`, lists of them), as
// nccl-tests counts bytes: K, M, G are powers of 1024.
#include "model/text.h"

#include <gtest/gtest.h>

namespace syncoll {
namespace {

std::vector<int64_t> sizes(const std::string &text) {
  auto parsed = parse_size_range(text);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error().to_string();
  return parsed ? *parsed : std::vector<int64_t>{};
}

std::string error_of(const std::string &text) {
  auto parsed = parse_size_range(text);
  EXPECT_FALSE(parsed) << text;
  return parsed ? std::string() : parsed.error().items().front().message;
}

TEST(SizeRangeTest, OneSizeASweepAndAListOfThem) {
  EXPECT_EQ(sizes("64KiB"), (std::vector<int64_t>{65536}));
  EXPECT_EQ(sizes("1K..8K"), (std::vector<int64_t>{1024, 2048, 4096, 8192}));
  // A list is ascending and says each size once, whatever order and overlap it is given in.
  EXPECT_EQ(sizes("1GiB,1MiB,2MiB..4MiB,4MiB"),
            (std::vector<int64_t>{1 << 20, 2 << 20, 4 << 20, int64_t(1) << 30}));
}

TEST(SizeRangeTest, MalformedListsNameTheirFault) {
  EXPECT_EQ(error_of("1MiB,,2MiB"), "size list '1MiB,,2MiB' has an empty entry");
  EXPECT_EQ(error_of("1MiB,"), "size list '1MiB,' has an empty entry");
  EXPECT_EQ(error_of("1MiB,2XB"), "size '2XB' has an unknown unit 'XB' (B; K, KB or KiB; M, MB or "
                                  "MiB; G, GB or GiB; T, TB or TiB: all powers of 1024)");
  EXPECT_EQ(error_of("8MiB..1MiB,1GiB"), "size range '8MiB..1MiB' ends below its start");
}

} // namespace
} // namespace syncoll
