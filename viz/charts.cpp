#include "viz/charts.h"

#include "model/text.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace syncoll::viz {
std::string xml_escaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

namespace {

constexpr const char *kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

} // namespace

double text_width_px(const std::string &text, double font_px) {
  return 0.62 * font_px * double(text.size());
}

size_t tick_stride(const std::vector<std::string> &labels, double spacing) {
  double widest = 0;
  for (const std::string &l : labels)
    widest = std::max(widest, text_width_px(l));
  return std::max<size_t>(1, size_t(std::ceil((widest + 8) / std::max(1.0, spacing))));
}

double line_width(size_t k, size_t series) {
  return series <= 1 ? 2.0 : 1.5 + 3.0 * double(series - 1 - k) / double(series - 1);
}

std::string marker_svg(size_t k, size_t series, double x, double y, const std::string &color) {
  const double r = 3 + 2.5 * (series <= 1 ? 0.0 : double(series - 1 - k) / double(series - 1));
  switch (k % 4) {
  case 0:
    return fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\"/>\n", x, y, r,
                       color);
  case 1:
    return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                       "fill=\"{}\"/>\n",
                       x - r, y - r, 2 * r, 2 * r, color);
  case 2:
    return fmt::format("<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" "
                       "fill=\"{}\"/>\n",
                       x, y - 1.3 * r, x - 1.2 * r, y + r, x + 1.2 * r, y + r, color);
  default:
    return fmt::format(
        "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" "
        "fill=\"{}\"/>\n",
        x, y - 1.3 * r, x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y, color);
  }
}

std::string timeline_svg(const simulator::SimulationResult &r, const std::string &title) {
  std::map<std::pair<int, int>, std::string> rows; // (rank, thread) -> name
  for (const auto &s : r.trace)
    rows.emplace(std::make_pair(s.process, s.thread),
                 s.thread_name.empty() ? fmt::format("rank {} / {}", s.process, s.thread)
                                       : fmt::format("rank {} {}", s.process, s.thread_name));
  std::map<std::pair<int, int>, int> row_of;
  for (const auto &[key, name] : rows)
    row_of.emplace(key, int(row_of.size()));
  const double end_us = std::max(1e-9, double(r.completion) / 1e6);
  const int left = 170, width = 900, row_h = 16, top = 40;
  const int height = top + int(rows.size()) * row_h + 40;
  std::string out =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                  "font-family=\"Helvetica\" font-size=\"11\">\n",
                  left + width + 20, height);
  out += fmt::format("<text x=\"10\" y=\"20\" font-size=\"14\">{}</text>\n",
                     xml_escaped(fmt::format("{} ({:.3f} us)", title, end_us)));
  for (const auto &[key, name] : rows) {
    const int y = top + row_of[key] * row_h;
    out += fmt::format("<text x=\"10\" y=\"{}\">{}</text>\n", y + 12, xml_escaped(name));
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#eee\"/>\n", left,
                       y + row_h, left + width, y + row_h);
  }
  for (const auto &s : r.trace) {
    const int y = top + row_of[{s.process, s.thread}] * row_h + 2;
    const double x = left + width * (double(s.start) / 1e6) / end_us;
    const double w = std::max(0.5, width * (double(s.duration) / 1e6) / end_us);
    const size_t color = std::hash<std::string>{}(s.name) % std::size(kPalette);
    out += fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
                       "fill=\"{}\"><title>{}</title></rect>\n",
                       x, y, w, row_h - 4, kPalette[color], xml_escaped(s.name));
  }
  const int axis_y = top + int(rows.size()) * row_h + 15;
  for (int i = 0; i <= 10; ++i) {
    const double x = left + width * i / 10.0;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.3g}</text>\n", x,
                       axis_y, end_us * i / 10.0);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">time (us)</text>\n",
                     left + width / 2, axis_y + 18);
  return out + "</svg>\n";
}

std::string speedup_svg(const std::vector<std::int64_t> &sizes, const std::vector<Series> &series,
                        const std::string &title, const std::string &y_label) {
  const int left = 70, top = 40, width = 640, height = 360;
  double lo = 1, hi = 1;
  for (const Series &s : series)
    for (double v : s.values)
      if (v > 0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  lo = std::pow(2.0, std::floor(std::log2(lo)));
  hi = std::pow(2.0, std::ceil(std::log2(hi)));
  if (hi <= lo)
    hi = lo * 2;
  auto x_of = [&](size_t i) {
    return left + (sizes.size() <= 1 ? 0.0 : width * double(i) / double(sizes.size() - 1));
  };
  auto y_of = [&](double v) {
    return top + height * (1 - (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo)));
  };
  std::string out =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                  "font-family=\"Helvetica\" font-size=\"11\">\n",
                  left + width + 190, top + height + 60);
  out +=
      fmt::format("<text x=\"{}\" y=\"22\" font-size=\"14\">{}</text>\n", left, xml_escaped(title));
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#999\"/>\n",
                     left, top, width, height);
  for (double v = lo; v <= hi * 1.0001; v *= 2) {
    out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n",
                       left, left + width, y_of(v), y_of(v));
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", left - 6,
                       y_of(v) + 4, v);
  }
  out += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" "
                     "stroke-dasharray=\"5,4\"/>\n",
                     left, left + width, y_of(1), y_of(1));
  std::vector<std::string> labels;
  for (std::int64_t size : sizes)
    labels.push_back(format_size(size));
  const size_t stride =
      tick_stride(labels, sizes.size() <= 1 ? width : width / double(sizes.size() - 1));
  for (size_t i = 0; i < sizes.size(); i += stride)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(i),
                       top + height + 16, format_size(sizes[i]));
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">message size</text>\n",
                     left + width / 2, top + height + 36);
  out += fmt::format("<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" "
                     "text-anchor=\"middle\">{}</text>\n",
                     top + height / 2, top + height / 2, xml_escaped(y_label));
  for (size_t k = 0; k < series.size(); ++k) {
    std::string points, markers;
    const char *color = kPalette[k % std::size(kPalette)];
    for (size_t i = 0; i < sizes.size() && i < series[k].values.size(); ++i)
      if (series[k].values[i] > 0) {
        points += fmt::format("{:.1f},{:.1f} ", x_of(i), y_of(series[k].values[i]));
        markers += marker_svg(k, series.size(), x_of(i), y_of(series[k].values[i]), color);
      }
    out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"{:.1f}\" "
                       "points=\"{}\"/>\n",
                       color, line_width(k, series.size()), points);
    out += markers;
    out += marker_svg(k, series.size(), left + width + 16, top + 10 + 16 * double(k), color);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", left + width + 28,
                       top + 14 + 16 * int(k), color, xml_escaped(series[k].name));
  }
  return out + "</svg>\n";
}

} // namespace syncoll::viz
