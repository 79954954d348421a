// The HTML report: one self-contained page (inline SVG and CSS, no script, nothing fetched).
#include "model/text.h"
#include "study/report.h"
#include "viz/charts.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace syncoll::study {
namespace {

constexpr const char *kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

// A tick spacing of 1, 2 or 5 times a power of ten giving about five ticks up to `top`.
double tick_step(double top) {
  const double raw = top / 5;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw)
      return m * power;
  return 10 * power;
}

struct Series {
  std::string name;
  std::string color;
  std::vector<std::optional<double>> values; ///< one per size; none where the variant did not run
};

// Values against sizes (one x position per size, evenly spaced: sizes double), one polyline and
// marker set per series, with a legend. Size labels thin out so that they never touch; a line
// drawn under another shows as its border and by its larger markers of another shape.
std::string line_plot(const std::string &title, const std::string &y_label,
                      const std::vector<int64_t> &sizes, const std::vector<Series> &series) {
  constexpr double W = 560, H = 300, L = 60, R = 150, T = 30, B = 50;
  double top = 0;
  for (const Series &s : series)
    for (const auto &v : s.values)
      if (v)
        top = std::max(top, *v);
  if (top <= 0)
    top = 1;
  const double step = tick_step(top);
  top = std::ceil(top / step) * step;
  auto x = [&](size_t i) {
    return sizes.size() < 2 ? L + (W - L - R) / 2
                            : L + (W - L - R) * double(i) / double(sizes.size() - 1);
  };
  auto y = [&](double v) { return T + (H - T - B) * (1 - v / top); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" class=\"plot\">\n"
      "<text x=\"{}\" y=\"18\" class=\"title\">{}</text>\n",
      W, H, L, viz::xml_escaped(title));
  for (double v = 0; v <= top + step / 2; v += step)
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/>"
                       "<text x=\"{}\" y=\"{:.1f}\" class=\"ytick\">{:g}</text>\n",
                       L, W - R, y(v), y(v), L - 6, y(v) + 4, v);
  std::vector<std::string> labels;
  for (int64_t size : sizes)
    labels.push_back(format_size(size));
  const size_t stride = viz::tick_stride(
      labels, sizes.size() < 2 ? W - L - R : (W - L - R) / double(sizes.size() - 1));
  for (size_t i = 0; i < sizes.size(); i += stride)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xtick\">{}</text>\n", x(i), H - B + 16,
                       viz::xml_escaped(labels[i]));
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xtick\">message size</text>\n",
                     (L + W - R) / 2, H - B + 36);
  svg += fmt::format("<text x=\"14\" y=\"{:.1f}\" class=\"ylabel\" transform=\"rotate(-90 14 "
                     "{:.1f})\">{}</text>\n",
                     (H - B + T) / 2, (H - B + T) / 2, viz::xml_escaped(y_label));
  for (size_t k = 0; k < series.size(); ++k) {
    const Series &s = series[k];
    std::string points, markers;
    for (size_t i = 0; i < s.values.size(); ++i)
      if (s.values[i]) {
        points += fmt::format("{:.1f},{:.1f} ", x(i), y(*s.values[i]));
        markers += viz::marker_svg(k, series.size(), x(i), y(*s.values[i]), s.color);
      }
    if (!points.empty())
      svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" "
                         "stroke-width=\"{:.1f}\"/>\n",
                         points, s.color, viz::line_width(k, series.size()));
    svg += markers;
    svg += viz::marker_svg(k, series.size(), W - R + 18, T + 18 * double(k) + 6, s.color);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"legend\">{}</text>\n", W - R + 30,
                       T + 18 * double(k) + 10, viz::xml_escaped(s.name));
  }
  return svg + "</svg>\n";
}

std::string plots(const Results &r) {
  const Study &study = *r.study;
  std::string html = "<h2>Bus bandwidth and speedup by size</h2>\n";
  for (size_t m = 0; m < study.machines.size(); ++m)
    for (CollectiveKind c : study.collectives) {
      std::vector<Series> busbw, speedup;
      for (size_t v = 0; v < study.variants.size(); ++v) {
        Series b{study.variants[v].name, kPalette[v % std::size(kPalette)], {}};
        Series s = b;
        for (int64_t size : study.sizes) {
          const size_t p = r.point_of(m, c, v, size);
          const Outcome &o = r.outcomes[p];
          b.values.push_back(o.status == OutcomeStatus::Ok ? std::optional(o.busbw_gbps)
                                                           : std::nullopt);
          s.values.push_back(r.speedup(p));
        }
        busbw.push_back(std::move(b));
        speedup.push_back(std::move(s));
      }
      html += fmt::format("<h3>{} on {}</h3>\n<div class=\"figure\">\n", collective_kind_name(c),
                          viz::xml_escaped(machine_title(study.machines[m]))) +
              line_plot("bus bandwidth", "busbw (GB/s)", study.sizes, busbw) +
              line_plot("speedup over " + study.baseline, "speedup", study.sizes, speedup) +
              "</div>\n";
    }
  return html;
}

// One variant's metric over two machine axes at one collective and size; cells shaded by value.
std::string heat_map(const Results &r, const Heatmap &h) {
  const Study &study = *r.study;
  size_t variant = 0;
  while (study.variants[variant].name != h.variant && study.variants[variant].family != h.variant)
    ++variant;
  if (std::find(study.sizes.begin(), study.sizes.end(), h.size) == study.sizes.end())
    return fmt::format("<h2>Heat map</h2>\n<p>The heat map is at {}, which this run did not "
                       "simulate (a --quick run has its own sizes).</p>\n",
                       viz::xml_escaped(format_size(h.size)));
  std::map<std::pair<double, double>, double> cells;
  std::set<double> xs, ys;
  // One system's (or family's) machines: two at the same axis values would share a cell.
  const std::string system = study.machines.front().system.empty() ? study.machines.front().topology
                                                                   : study.machines.front().system;
  for (size_t m = 0; m < study.machines.size(); ++m) {
    const Machine machine = resolved(study.machines[m]);
    if ((machine.system.empty() ? machine.topology : machine.system) != system)
      continue;
    const size_t p = r.point_of(m, h.collective, variant, h.size);
    const Outcome &o = r.outcomes[p];
    std::optional<double> value;
    if (h.metric == "speedup")
      value = r.speedup(p);
    else if (o.status == OutcomeStatus::Ok)
      value = h.metric == "time_us" ? o.time_us : o.busbw_gbps;
    const double x = *machine_axis(machine, h.x), y = *machine_axis(machine, h.y);
    xs.insert(x);
    ys.insert(y);
    if (value)
      cells[{x, y}] = *value;
  }
  double lo = cells.empty() ? 0 : cells.begin()->second, hi = lo;
  for (const auto &[xy, v] : cells) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  constexpr double C = 80, L = 90, T = 40;
  const double W = std::max(560.0, L + C * double(xs.size()) + 20),
               H = T + 30 * double(ys.size()) + 60;
  std::string svg = fmt::format(
      "<h2>Heat map</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "class=\"plot heatmap\">\n<text x=\"{}\" y=\"18\" class=\"title\">{} of {}, {} at "
      "{} on {}</text>\n",
      W, H, L, h.metric, viz::xml_escaped(study.variants[variant].name),
      collective_kind_name(h.collective), viz::xml_escaped(format_size(h.size)),
      viz::xml_escaped(system));
  // Ticks carry values; the axes' titles name what they are (a tick "nic_bandwidth 12.5" is
  // wider than its 80-px column).
  size_t i = 0;
  for (double x : xs)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"xtick\">{:g}</text>\n",
                       L + C * (double(i++) + 0.5), H - 34, x);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"xtick\">{}</text>\n",
                     L + C * double(xs.size()) / 2, H - 14, viz::xml_escaped(h.x));
  svg += fmt::format("<text x=\"14\" y=\"{:.1f}\" class=\"ylabel\" transform=\"rotate(-90 14 "
                     "{:.1f})\">{}</text>\n",
                     T + 15 * double(ys.size()), T + 15 * double(ys.size()), viz::xml_escaped(h.y));
  size_t j = 0;
  for (double y : ys) {
    const double top = T + 30 * double(j++);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"ytick\">{:g}</text>\n", L - 6, top + 19,
                       y);
    size_t k = 0;
    for (double x : xs) {
      const double left = L + C * double(k++);
      auto it = cells.find({x, y});
      if (it == cells.end()) {
        svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"28\" "
                           "fill=\"#eeeeee\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
                           "class=\"cell\">-</text>\n",
                           left, top, C - 2, left + C / 2, top + 19);
        continue;
      }
      const double t = hi > lo ? (it->second - lo) / (hi - lo) : 1;
      const int shade = int(std::lround(235 - 160 * t));
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"28\" "
                         "fill=\"rgb({},{},255)\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
                         "class=\"cell\">{:.3g}</text>\n",
                         left, top, C - 2, shade, shade, left + C / 2, top + 19, it->second);
    }
  }
  return svg + "</svg>\n";
}

std::string winners(const Results &r) {
  const Study &study = *r.study;
  std::string html = "<h2>Winner per size</h2>\n<table>\n<tr><th>machine</th><th>collective</th>";
  for (int64_t size : study.sizes)
    html += "<th>" + viz::xml_escaped(format_size(size)) + "</th>";
  html += "</tr>\n";
  for (size_t m = 0; m < study.machines.size(); ++m)
    for (CollectiveKind c : study.collectives) {
      html +=
          fmt::format("<tr><td>{}</td><td>{}</td>",
                      viz::xml_escaped(machine_title(study.machines[m])), collective_kind_name(c));
      for (int64_t size : study.sizes) {
        const auto w = r.winner(m, c, size);
        if (!w) {
          html += "<td>none ran</td>";
          continue;
        }
        const auto s = r.speedup(r.point_of(m, c, *w, size));
        html += fmt::format("<td>{}{}</td>", viz::xml_escaped(study.variants[*w].name),
                            s ? fmt::format(" ({:.2f}x)", *s) : "");
      }
      html += "</tr>\n";
    }
  return html + "</table>\n";
}

std::string failures(const Results &r) {
  std::string rows;
  for (size_t i = 0; i < r.plan->points.size(); ++i) {
    const Outcome &o = r.outcomes[i];
    if (o.status == OutcomeStatus::Ok)
      continue;
    const Point &p = r.plan->points[i];
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                        "</tr>\n",
                        viz::xml_escaped(machine_title(r.study->machines[p.machine])),
                        collective_kind_name(p.collective), viz::xml_escaped(format_size(p.size)),
                        viz::xml_escaped(r.study->variants[p.variant].name),
                        outcome_status_name(o.status), viz::xml_escaped(o.note));
  }
  if (rows.empty())
    return "<h2>Points that did not run</h2>\n<p>None: every point ran.</p>\n";
  return "<h2>Points that did not run</h2>\n<table>\n<tr><th>machine</th><th>collective</th>"
         "<th>size</th><th>variant</th><th>status</th><th>why</th></tr>\n" +
         rows + "</table>\n";
}

} // namespace

std::string report_html(const Results &r) {
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>{}</title>\n<style>\n"
      "body {{ font-family: sans-serif; margin: 2em; color: #222; }}\n"
      "table {{ border-collapse: collapse; margin: 1em 0; }}\n"
      "td, th {{ border: 1px solid #ccc; padding: 4px 8px; font-size: 13px; }}\n"
      ".figure {{ display: flex; flex-wrap: wrap; gap: 1em; }}\n"
      ".plot text {{ font-size: 11px; }}\n .plot .title {{ font-size: 12px; font-weight: bold; }}\n"
      ".plot .grid {{ stroke: #ddd; }}\n .plot .ytick {{ text-anchor: end; }}\n"
      ".plot .xtick, .plot .cell {{ text-anchor: middle; }}\n"
      ".plot .ylabel {{ text-anchor: middle; }}\n"
      "</style>\n</head>\n<body>\n<h1>Study: {}</h1>\n",
      viz::xml_escaped(r.study->name), viz::xml_escaped(r.study->name));
  if (!r.study->question.empty())
    html += "<p class=\"question\">" + viz::xml_escaped(r.study->question) + "</p>\n";
  size_t ran = 0;
  for (const Outcome &o : r.outcomes)
    ran += o.status == OutcomeStatus::Ok;
  html += fmt::format("<p>{} points ({} ran, {} did not); speedups are over {}; simulated by "
                      "syncoll (docs/cost-model.md).</p>\n",
                      r.outcomes.size(), ran, r.outcomes.size() - ran,
                      viz::xml_escaped(r.study->baseline));
  html += winners(r);
  if (r.study->heatmap)
    html += heat_map(r, *r.study->heatmap);
  html += plots(r);
  html += failures(r);
  return html + "</body>\n</html>\n";
}

} // namespace syncoll::study
