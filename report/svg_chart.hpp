// A small SVG chart for the HTML report: a plot frame with linear axes and
// "nice" ticks (1, 2 or 5 times a power of ten), and marks given in data
// coordinates. Marks carry a CSS class (the report's stylesheet colours them)
// and optionally a tooltip (<title>), so the page needs no JavaScript and no
// network. Non-finite data points are skipped.
#pragma once

#include <string>
#include <vector>

namespace bfhpo::report {

struct Range {
  double low = 0.0;
  double high = 1.0;
};

// The range of the finite `values`, widened by `pad` of its span on each side
// (a constant range is widened by 1 around its value; none finite gives [0, 1]).
Range range_of(const std::vector<double>& values, double pad = 0.05);
Range range_of(const std::vector<double>& values, const std::vector<double>& more, double pad = 0.05);

// Ticks at k * step, step 1, 2 or 5 x 10^n, about `target` of them, all inside `range`.
std::vector<double> nice_ticks(Range range, int target = 5);

// XML text escaping (& < > " ').
std::string xml_escape(const std::string& text);

class SvgChart {
 public:
  SvgChart(std::string title, std::string x_label, std::string y_label, Range x, Range y, int width = 540,
           int height = 300);

  // One <circle> a point; `tooltips` empty or one a point; `data_trial` (when
  // not empty) becomes each circle's data-trial attribute.
  void points(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class,
              const std::vector<std::string>& tooltips = {}, const std::vector<int>& data_trial = {},
              double radius = 3.5);
  // A cross (two lines in one <path>) a point.
  void crosses(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class,
               const std::vector<std::string>& tooltips = {});
  void polyline(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class,
                const std::string& tooltip = "");
  // A staircase through the points (value held until the next x).
  void step_line(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class);
  // The area between `lows` and `highs` over `xs`.
  void band(const std::vector<double>& xs, const std::vector<double>& lows, const std::vector<double>& highs,
            const std::string& css_class);
  void horizontal_line(double y, const std::string& css_class, const std::string& label = "");
  // The line y = x across the visible range.
  void diagonal(const std::string& css_class);
  // Bars from y = 0 (clipped to the range) to each height, centred on xs, `width` in data units.
  void bars(const std::vector<double>& xs, const std::vector<double>& heights, double width,
            const std::vector<std::string>& css_classes, const std::vector<std::string>& tooltips = {});
  // One swatch and label per entry, in a row of its own below the chart (the
  // SVG grows by that row), so it never covers a mark.
  void legend(const std::vector<std::pair<std::string, std::string>>& label_and_class);

  std::string svg() const;

 private:
  double px(double x) const;
  double py(double y) const;

  std::string title_, x_label_, y_label_;
  Range x_, y_;
  int width_, height_;
  std::string marks_;   // clipped to the plot area
  std::string labels_;  // line labels, drawn over it
  std::string legend_;  // the row below the chart
};

// Horizontal bars from 0, one a label, top to bottom, each with its value written after it.
std::string horizontal_bar_chart(const std::string& title, const std::string& x_label,
                                 const std::vector<std::string>& labels, const std::vector<double>& lengths,
                                 const std::string& css_class, int width = 540);

}  // namespace bfhpo::report
