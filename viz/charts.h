// Charts written as SVG directly (no layout needed): a Gantt timeline of a simulation trace and
// a speedup-versus-size plot.
#pragma once

#include "simulator/result.h"

#include <string>
#include <vector>

namespace syncoll::viz {

/// One row per (rank, thread block or link) of the trace, bars at their simulated times, time
/// axis in microseconds.
std::string timeline_svg(const simulator::SimulationResult &result, const std::string &title);

struct Series {
  std::string name;
  std::vector<double> values; ///< one per size
};

/// `text` with XML's special characters escaped, for SVG text and attributes.
std::string xml_escaped(const std::string &text);

/// Chart geometry both the demo's plots and the study report use (text is 11-px sans-serif).
/// Width of `text` in px, generous: 0.62 em per character (sans-serif digits are 0.56 em).
double text_width_px(const std::string &text, double font_px = 11);
/// Label every k-th of `labels` placed `spacing` px apart, the smallest k at which neighbours
/// keep 8 px between them.
size_t tick_stride(const std::vector<std::string> &labels, double spacing);
/// Series `k`'s marker at (x, y): circle, square, triangle, diamond, in turn, drawn larger for
/// earlier series, so a point under another's shows around it.
std::string marker_svg(size_t k, size_t series, double x, double y, const std::string &color);
/// Series `k`'s line width of `series`: earlier lines wider, so a line under another shows as
/// its border.
double line_width(size_t k, size_t series);

/// Lines over sizes (log scale, labelled as nccl-tests prints sizes), a dashed line at 1.
std::string speedup_svg(const std::vector<std::int64_t> &sizes, const std::vector<Series> &series,
                        const std::string &title, const std::string &y_label);

} // namespace syncoll::viz
