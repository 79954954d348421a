// The study's HTML report in a real browser: headless Chromium loads it, its DOM has the plots,
// and a screenshot has the plotted lines in the variants' colors (a page that renders blank, or
// plots without data, fails).
#include "tests/cli/run_cli.h"
#include "tests/support/drawing_check.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <zlib.h>

namespace syncoll::testing {
namespace {

namespace fs = std::filesystem;

struct Image {
  int width = 0, height = 0;
  std::vector<std::array<uint8_t, 3>> pixels; ///< row-major RGB
};

uint32_t big_endian(const std::string &s, size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
         uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes); none for anything else.
std::optional<Image> decode_png(const std::string &file) {
  if (file.size() < 8 || file.compare(1, 3, "PNG") != 0)
    return std::nullopt;
  Image image;
  int channels = 0;
  std::string compressed;
  for (size_t at = 8; at + 8 <= file.size();) {
    const uint32_t length = big_endian(file, at);
    const std::string type = file.substr(at + 4, 4);
    if (type == "IHDR") {
      image.width = int(big_endian(file, at + 8));
      image.height = int(big_endian(file, at + 12));
      const int depth = uint8_t(file[at + 16]), color = uint8_t(file[at + 17]);
      if (depth != 8 || (color != 2 && color != 6) || file[at + 20] != 0)
        return std::nullopt;
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed += file.substr(at + 8, length);
    }
    at += 12 + length;
  }
  const size_t stride = size_t(image.width) * size_t(channels);
  std::vector<uint8_t> raw((stride + 1) * size_t(image.height));
  uLongf raw_size = raw.size();
  if (channels == 0 ||
      uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef *>(compressed.data()),
                 compressed.size()) != Z_OK ||
      raw_size != raw.size())
    return std::nullopt;
  std::vector<uint8_t> previous(stride, 0), row(stride);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t *in = &raw[size_t(y) * (stride + 1)];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= size_t(channels) ? row[x - size_t(channels)] : 0, b = previous[x],
                c = x >= size_t(channels) ? previous[x - size_t(channels)] : 0;
      const int predictor = in[0] == 1   ? a
                            : in[0] == 2 ? b
                            : in[0] == 3 ? (a + b) / 2
                            : in[0] == 4 ? paeth(a, b, c)
                                         : 0;
      row[x] = uint8_t(in[1 + x] + predictor);
    }
    for (int x = 0; x < image.width; ++x) {
      const uint8_t *p = &row[size_t(x) * size_t(channels)];
      image.pixels.push_back({p[0], p[1], p[2]});
    }
    previous = row;
  }
  return image;
}

size_t pixels_near(const Image &image, std::array<int, 3> color) {
  size_t n = 0;
  for (const auto &p : image.pixels)
    n += std::abs(p[0] - color[0]) + std::abs(p[1] - color[1]) + std::abs(p[2] - color[2]) < 30;
  return n;
}

std::string chromium(const std::string &arguments, const fs::path &profile) {
  return "chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
         "--disable-background-networking --disable-component-update --disable-sync "
         "--hide-scrollbars --user-data-dir='" +
         profile.string() + "' " + arguments + " 2>/dev/null";
}

TEST(StudyReportBrowserTest, TheReportLoadsInChromiumWithItsPlotsDrawn) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "chromium is not installed: the report is not checked in a browser";
  const fs::path dir = temp_file("study-browser");
  fs::remove_all(dir);
  CliRun run = run_cli("study examples/studies/dgx1_nvlink_x2.json --quick -o " + dir.string());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string url = "file://" + fs::absolute(dir / "report.html").string();

  const fs::path dom = dir / "dom.html";
  ASSERT_EQ(std::system(
                (chromium("--dump-dom '" + url + "'", dir / "profile") + " >'" + dom.string() + "'")
                    .c_str()),
            0);
  const std::string text = read_all(dom);
  EXPECT_NE(text.find("Study: dgx1-nvlink-x2"), std::string::npos) << text.substr(0, 400);
  EXPECT_GE(std::count(text.begin(), text.end(), '<'), 100) << "the DOM is nearly empty";
  EXPECT_NE(text.find("<polyline"), std::string::npos);

  const fs::path shot = dir / "report.png";
  ASSERT_EQ(std::system(chromium("--window-size=1200,1600 --screenshot='" + shot.string() + "' '" +
                                     url + "'",
                                 dir / "profile")
                            .c_str()),
            0);
  const auto image = decode_png(read_all(shot));
  ASSERT_TRUE(image.has_value()) << "not a PNG Chromium writes: " << shot;
  ASSERT_EQ(image->pixels.size(), size_t(image->width) * size_t(image->height));
  // The first two variants' lines, in the report's palette. Their legend squares alone cover
  // 864 pixels of each color in this window (the report with its lines and markers removed); the
  // drawn report about 3,800.
  EXPECT_GT(pixels_near(*image, {0x1f, 0x77, 0xb4}), 2000u) << "no NCCL line in the screenshot";
  EXPECT_GT(pixels_near(*image, {0xd6, 0x27, 0x28}), 2000u) << "no ring line in the screenshot";
  fs::remove_all(dir);
}

// Each plot of the report over nccl-tests' 21 sizes, and its heat map, as a person sees them:
// tick labels apart (21 size labels on a 350-px axis overlapped before), each axis titled, and
// each plot an SVG that rsvg-convert renders at its stated size.
TEST(StudyReportDrawingTest, PlotLabelsNeverOverlapAndEveryAxisIsTitled) {
  for (const std::string study :
       {"tests/data/studies/many_sizes.json", "tests/data/studies/sharding.json"}) {
    const fs::path dir = temp_file("study-drawing");
    fs::remove_all(dir);
    CliRun run = run_cli("study " + study + " -o " + dir.string());
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const std::string html = read_all(dir / "report.html");
    const std::regex plot(R"re(<svg[^>]*width="(\d+)" height="(\d+)"[\s\S]*?</svg>)re");
    int plots = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), plot);
         it != std::sregex_iterator(); ++it, ++plots) {
      const std::string svg = it->str();
      EXPECT_EQ(overlapping_labels(svg), std::nullopt) << study << " plot " << plots;
      const bool heat_map = svg.find("heatmap") != std::string::npos;
      EXPECT_TRUE(heat_map || svg.find(">message size<") != std::string::npos) << svg;
      EXPECT_NE(svg.find("class=\"ylabel\""), std::string::npos) << svg;
      if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0)
        continue;
      const fs::path in = dir / "plot.svg", out = dir / "plot.png";
      std::ofstream(in) << svg;
      ASSERT_EQ(
          std::system(("rsvg-convert -o '" + out.string() + "' '" + in.string() + "'").c_str()), 0);
      const auto size = png_size(read_all(out));
      ASSERT_TRUE(size);
      EXPECT_EQ(size->first, std::stoi((*it)[1]));
      EXPECT_EQ(size->second, std::stoi((*it)[2]));
    }
    EXPECT_GE(plots, 2) << study;
    fs::remove_all(dir);
  }
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "rsvg-convert is not installed (librsvg2-bin): labels were checked, the "
                    "plots not rendered";
}

TEST(StudyReportDrawingTest, TheOverlapCheckFindsOverlappingLabels) {
  EXPECT_TRUE(overlapping_labels("<svg><text x=\"10\" y=\"20\">1 KiB</text><text x=\"20\" "
                                 "y=\"20\">2 KiB</text></svg>"));
  EXPECT_FALSE(overlapping_labels("<svg><text x=\"10\" y=\"20\">1 KiB</text><text x=\"60\" "
                                  "y=\"20\">2 KiB</text></svg>"));
}

} // namespace
} // namespace syncoll::testing
