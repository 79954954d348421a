// Drawings checked as a person would look at them: rendered to PNG (Graphviz's renderer for the
// DOT drawings, rsvg-convert for the SVG charts), within a screen's worth or two at the sizes
// users draw, with no label over another, and ranks in one order in every column.
#include "model/mscclir.h"
#include "model/topology_library.h"
#include "testing/programs.h"
#include "tests/support/drawing_check.h"
#include "tests/support/golden.h"
#include "tests/viz/shared_renderer.h"
#include "viz/charts.h"
#include "viz/dot.h"
#include "viz/render.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>

namespace syncoll::viz {
namespace {

using testing::overlapping_labels;
using testing::png_size;

// The drawing's PNG size, and that no two labels of its SVG overlap.
std::pair<int, int> rendered(const std::string &dot, const std::string &what) {
  auto svg = shared_renderer().render(dot, ImageFormat::Svg);
  auto png = shared_renderer().render(dot, ImageFormat::Png);
  EXPECT_TRUE(svg && png) << what;
  if (!svg || !png)
    return {0, 0};
  EXPECT_EQ(overlapping_labels(*svg), std::nullopt) << what;
  const auto size = png_size(*png);
  EXPECT_TRUE(size) << what;
  return size.value_or(std::pair{0, 0});
}

TEST(DrawingScaleTest, TwoDgxH100NodesFitOnAScreen) {
  auto direct = multinode(2, dgx_h100(), 8, BytesPerNs{50});
  FatTree fabric;
  fabric.nics_per_node = 8;
  fabric.nic_bandwidth = BytesPerNs{50};
  auto switched = fat_tree(2, dgx_h100(), fabric);
  ASSERT_TRUE(direct && switched);
  for (const Topology *t : {&*direct, &*switched}) {
    const auto [width, height] = rendered(topology_dot(*t), t->name());
    // 240 links and 64 relations one by one drew 31,655 px wide.
    EXPECT_LT(width, 3000) << t->name();
    EXPECT_LT(height, 3000) << t->name();
  }
}

TEST(DrawingScaleTest, ProgramsOfManyStepsFold) {
  // NCCL's ring Allreduce on 16 ranks: 16 lanes of 30 steps, wider than 12 columns.
  const std::string dot = program_dot(testing::ring_allreduce_program(16, 1));
  EXPECT_NE(dot.find("folded:"), std::string::npos);
  const auto [width, height] = rendered(dot, "ring allreduce on 16 ranks");
  EXPECT_LT(width, 5000);
  EXPECT_LT(height, 5000);
  auto small =
      read_program_file(std::string(SYNCOLL_SOURCE_DIR) + "/examples/ir/ring_allreduce_4.xml");
  ASSERT_TRUE(small);
  EXPECT_EQ(program_dot(small->value).find("folded:"), std::string::npos);
}

TEST(DrawingScaleTest, AlgorithmColumnsKeepOneRankOrder) {
  auto algo = read_algorithm_file(std::string(SYNCOLL_SOURCE_DIR) +
                                  "/examples/algorithms/dgx1_allgather_ring.json");
  ASSERT_TRUE(algo);
  auto svg = shared_renderer().render(algorithm_dot(*algo), ImageFormat::Svg);
  ASSERT_TRUE(svg);
  EXPECT_EQ(overlapping_labels(*svg), std::nullopt);
  // Graphviz writes each node as <title>t{column}_r{rank}</title> then its ellipse's centre.
  const std::regex node(
      R"re(<title>t(\d+)_r(\d+)</title>\s*<ellipse[^>]*cx="([-\d.]+)" cy="([-\d.]+)")re");
  std::map<int, std::map<int, double>> y; // column -> rank -> y
  for (auto it = std::sregex_iterator(svg->begin(), svg->end(), node); it != std::sregex_iterator();
       ++it)
    y[std::stoi((*it)[1])][std::stoi((*it)[2])] = std::stod((*it)[4]);
  ASSERT_EQ(y.size(), size_t(algo->num_steps() + 1));
  for (const auto &[column, ranks] : y) {
    ASSERT_EQ(ranks.size(), size_t(algo->target.ranks));
    for (auto it = std::next(ranks.begin()); it != ranks.end(); ++it)
      EXPECT_GT(it->second, std::prev(it)->second) << "column " << column << ": rank " << it->first
                                                   << " drawn above rank " << std::prev(it)->first;
  }
}

TEST(DrawingScaleTest, ChartLabelsNeverOverlapAndHiddenLinesShow) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = 1024; s <= (std::int64_t(1) << 30); s *= 2)
    sizes.push_back(s);
  std::vector<double> same(sizes.size(), 1.2), other(sizes.size(), 0.8);
  const std::string svg =
      speedup_svg(sizes, {{"NCCL ring", same}, {"composed", same}, {"GC3", other}}, "t", "speedup");
  EXPECT_EQ(overlapping_labels(svg), std::nullopt);
  EXPECT_NE(svg.find(">message size<"), std::string::npos);
  EXPECT_NE(svg.find(">speedup<"), std::string::npos);
  // Two series on the same values: the one under is wider and marked by another shape, at every
  // size and in the legend (circles, squares besides the plot's frame, triangles).
  const auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("<circle"), sizes.size() + 1);
  EXPECT_EQ(count("<rect"), 1 + sizes.size() + 1);
  EXPECT_EQ(count("<polygon"), sizes.size() + 1);
  const std::regex width(R"re(<polyline[^>]*stroke-width="([\d.]+)")re");
  std::vector<double> widths;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), width); it != std::sregex_iterator();
       ++it)
    widths.push_back(std::stod((*it)[1]));
  ASSERT_EQ(widths.size(), 3u);
  EXPECT_GT(widths[0], widths[1]);
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "rsvg-convert is not installed (librsvg2-bin): the chart is not rendered";
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / "syncoll-chart.svg").string(),
                    out = (dir / "syncoll-chart.png").string();
  std::ofstream(in) << svg;
  ASSERT_EQ(std::system(("rsvg-convert -o '" + out + "' '" + in + "'").c_str()), 0);
  const auto size = png_size(testing::slurp(out));
  ASSERT_TRUE(size);
  EXPECT_EQ(size->first, 900);
  EXPECT_EQ(size->second, 460);
}

} // namespace
} // namespace syncoll::viz
