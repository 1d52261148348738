#include "report/svg_chart.hpp"

#include "common/number_format.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>

namespace bfhpo::report {
namespace {

constexpr double kLeft = 64, kRight = 14, kTop = 30, kBottom = 46;
constexpr int kLegendRow = 20;  // below the x axis's label, so a legend never covers a mark

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

std::string tooltip_of(const std::vector<std::string>& tooltips, size_t i) {
  return i < tooltips.size() && !tooltips[i].empty() ? "<title>" + xml_escape(tooltips[i]) + "</title>" : "";
}

bool finite(double x, double y) { return std::isfinite(x) && std::isfinite(y); }

}  // namespace

Range range_of(const std::vector<double>& values, double pad) {
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (const double v : values)
    if (std::isfinite(v)) {
      low = std::min(low, v);
      high = std::max(high, v);
    }
  if (!std::isfinite(low)) return {0.0, 1.0};
  if (high - low <= 1e-12 * std::max(1.0, std::fabs(low))) return {low - 1.0, high + 1.0};
  const double span = high - low;
  return {low - pad * span, high + pad * span};
}

Range range_of(const std::vector<double>& values, const std::vector<double>& more, double pad) {
  std::vector<double> all = values;
  all.insert(all.end(), more.begin(), more.end());
  return range_of(all, pad);
}

std::vector<double> nice_ticks(Range range, int target) {
  const double span = range.high - range.low;
  if (!(span > 0) || !std::isfinite(span)) return {range.low};
  const double raw = span / std::max(1, target);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  std::vector<double> ticks;
  for (double k = std::ceil(range.low / step); k * step <= range.high + 1e-9 * step; k += 1.0)
    ticks.push_back(std::fabs(k * step) < 1e-12 * step ? 0.0 : k * step);
  return ticks;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

SvgChart::SvgChart(std::string title, std::string x_label, std::string y_label, Range x, Range y, int width,
                   int height)
    : title_(std::move(title)), x_label_(std::move(x_label)), y_label_(std::move(y_label)), x_(x), y_(y),
      width_(width), height_(height) {}

double SvgChart::px(double x) const { return kLeft + (x - x_.low) / (x_.high - x_.low) * (width_ - kLeft - kRight); }
double SvgChart::py(double y) const {
  return height_ - kBottom - (y - y_.low) / (y_.high - y_.low) * (height_ - kTop - kBottom);
}

void SvgChart::points(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class,
                      const std::vector<std::string>& tooltips, const std::vector<int>& data_trial, double radius) {
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
    if (!finite(xs[i], ys[i])) continue;
    marks_ += "<circle class=\"" + css_class + "\" cx=\"" + num(px(xs[i])) + "\" cy=\"" + num(py(ys[i])) + "\" r=\"" +
              num(radius) + "\"" + (i < data_trial.size() ? " data-trial=\"" + std::to_string(data_trial[i]) + "\"" : "") +
              ">" + tooltip_of(tooltips, i) + "</circle>\n";
  }
}

void SvgChart::crosses(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class,
                       const std::vector<std::string>& tooltips) {
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
    if (!finite(xs[i], ys[i])) continue;
    const double x = px(xs[i]), y = py(ys[i]), d = 4.5;
    marks_ += "<path class=\"" + css_class + "\" d=\"M" + num(x - d) + " " + num(y - d) + "L" + num(x + d) + " " +
              num(y + d) + "M" + num(x - d) + " " + num(y + d) + "L" + num(x + d) + " " + num(y - d) + "\">" +
              tooltip_of(tooltips, i) + "</path>\n";
  }
}

void SvgChart::polyline(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class,
                        const std::string& tooltip) {
  std::string coordinates;
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i)
    if (finite(xs[i], ys[i])) coordinates += num(px(xs[i])) + "," + num(py(ys[i])) + " ";
  if (coordinates.empty()) return;
  marks_ += "<polyline class=\"" + css_class + "\" points=\"" + coordinates + "\">" +
            (tooltip.empty() ? "" : "<title>" + xml_escape(tooltip) + "</title>") + "</polyline>\n";
}

void SvgChart::step_line(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& css_class) {
  std::vector<double> sx, sy;
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
    if (!finite(xs[i], ys[i])) continue;
    if (!sy.empty()) {
      sx.push_back(xs[i]);
      sy.push_back(sy.back());
    }
    sx.push_back(xs[i]);
    sy.push_back(ys[i]);
  }
  polyline(sx, sy, css_class);
}

void SvgChart::band(const std::vector<double>& xs, const std::vector<double>& lows, const std::vector<double>& highs,
                    const std::string& css_class) {
  std::string coordinates;
  for (size_t i = 0; i < xs.size(); ++i) coordinates += num(px(xs[i])) + "," + num(py(highs[i])) + " ";
  for (size_t i = xs.size(); i-- > 0;) coordinates += num(px(xs[i])) + "," + num(py(lows[i])) + " ";
  marks_ += "<polygon class=\"" + css_class + "\" points=\"" + coordinates + "\"/>\n";
}

void SvgChart::horizontal_line(double y, const std::string& css_class, const std::string& label) {
  if (!std::isfinite(y) || y < y_.low || y > y_.high) return;
  marks_ += "<line class=\"" + css_class + "\" x1=\"" + num(kLeft) + "\" x2=\"" + num(width_ - kRight) + "\" y1=\"" +
            num(py(y)) + "\" y2=\"" + num(py(y)) + "\"/>\n";
  if (!label.empty())
    labels_ += "<text class=\"mark-label\" x=\"" + num(width_ - kRight - 4) + "\" y=\"" + num(py(y) - 4) +
              "\" text-anchor=\"end\">" + xml_escape(label) + "</text>\n";
}

void SvgChart::diagonal(const std::string& css_class) {
  const double low = std::max(x_.low, y_.low), high = std::min(x_.high, y_.high);
  if (low >= high) return;
  polyline({low, high}, {low, high}, css_class);
}

void SvgChart::bars(const std::vector<double>& xs, const std::vector<double>& heights, double width,
                    const std::vector<std::string>& css_classes, const std::vector<std::string>& tooltips) {
  const double base = std::clamp(0.0, y_.low, y_.high);
  for (size_t i = 0; i < xs.size() && i < heights.size(); ++i) {
    if (!finite(xs[i], heights[i])) continue;
    const double top = std::clamp(heights[i], y_.low, y_.high);
    const double left = px(xs[i] - width / 2), right = px(xs[i] + width / 2);
    marks_ += "<rect class=\"" + (i < css_classes.size() ? css_classes[i] : std::string("bar")) + "\" x=\"" +
              num(left) + "\" y=\"" + num(std::min(py(top), py(base))) + "\" width=\"" + num(std::max(1.0, right - left)) +
              "\" height=\"" + num(std::fabs(py(base) - py(top))) + "\">" + tooltip_of(tooltips, i) + "</rect>\n";
  }
}

void SvgChart::legend(const std::vector<std::pair<std::string, std::string>>& label_and_class) {
  legend_.clear();
  double x = kLeft + 6;
  for (const auto& [label, css_class] : label_and_class) {
    legend_ += "<rect class=\"" + css_class + " legend-swatch\" x=\"" + num(x) + "\" y=\"" + num(height_ + 2.0) +
               "\" width=\"10\" height=\"10\"/><text class=\"legend\" x=\"" + num(x + 14) + "\" y=\"" +
               num(height_ + 11.0) + "\">" + xml_escape(label) + "</text>\n";
    x += 24 + 6.5 * static_cast<double>(label.size());
  }
}

std::string SvgChart::svg() const {
  static std::atomic<int> charts{0};
  const std::string clip = "plot-area-" + std::to_string(++charts);
  const int total_height = height_ + (legend_.empty() ? 0 : kLegendRow);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + std::to_string(width_) +
                    "\" height=\"" + std::to_string(total_height) + "\" viewBox=\"0 0 " + std::to_string(width_) +
                    " " + std::to_string(total_height) + "\">\n";
  out += "<text class=\"chart-title\" x=\"" + num(kLeft) + "\" y=\"18\">" + xml_escape(title_) + "</text>\n";
  const double bottom = height_ - kBottom, right = width_ - kRight;
  out += "<rect class=\"frame\" x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(right - kLeft) +
         "\" height=\"" + num(bottom - kTop) + "\"/>\n";
  for (const double t : nice_ticks(x_)) {
    out += "<line class=\"grid\" x1=\"" + num(px(t)) + "\" x2=\"" + num(px(t)) + "\" y1=\"" + num(kTop) + "\" y2=\"" +
           num(bottom) + "\"/><text class=\"tick\" x=\"" + num(px(t)) + "\" y=\"" + num(bottom + 14) +
           "\" text-anchor=\"middle\">" + format_number(t) + "</text>\n";
  }
  for (const double t : nice_ticks(y_)) {
    out += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" x2=\"" + num(right) + "\" y1=\"" + num(py(t)) + "\" y2=\"" +
           num(py(t)) + "\"/><text class=\"tick\" x=\"" + num(kLeft - 5) + "\" y=\"" + num(py(t) + 4) +
           "\" text-anchor=\"end\">" + format_number(t) + "</text>\n";
  }
  out += "<text class=\"axis-label\" x=\"" + num((kLeft + right) / 2) + "\" y=\"" + num(height_ - 8.0) +
         "\" text-anchor=\"middle\">" + xml_escape(x_label_) + "</text>\n";
  out += "<text class=\"axis-label\" transform=\"translate(14," + num((kTop + bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(y_label_) + "</text>\n";
  // Marks outside the ranges (an outlier, a line leaving the frame) are cut at the frame.
  out += "<clipPath id=\"" + clip + "\"><rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" +
         num(right - kLeft) + "\" height=\"" + num(bottom - kTop) + "\"/></clipPath>\n";
  out += "<g class=\"marks\" clip-path=\"url(#" + clip + ")\">\n" + marks_ + "</g>\n" + labels_ + legend_ + "</svg>\n";
  return out;
}

std::string horizontal_bar_chart(const std::string& title, const std::string& x_label,
                                 const std::vector<std::string>& labels, const std::vector<double>& lengths,
                                 const std::string& css_class, int width) {
  constexpr double kLabels = 190, kRow = 26;
  const double height = kTop + kRow * static_cast<double>(labels.size()) + kBottom;
  double longest = 0.0;
  for (const double v : lengths) longest = std::max(longest, std::isfinite(v) ? v : 0.0);
  const double scale = (width - kLabels - kRight - 40) / (longest > 0 ? longest : 1.0);
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + std::to_string(width) +
                    "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + num(height) +
                    "\">\n<text class=\"chart-title\" x=\"" + num(kLeft) + "\" y=\"18\">" + xml_escape(title) +
                    "</text>\n";
  for (size_t i = 0; i < labels.size(); ++i) {
    const double y = kTop + kRow * static_cast<double>(i);
    const double length = i < lengths.size() && std::isfinite(lengths[i]) ? lengths[i] : 0.0;
    out += "<text class=\"tick\" x=\"" + num(kLabels - 6) + "\" y=\"" + num(y + 16) + "\" text-anchor=\"end\">" +
           xml_escape(labels[i]) + "</text><rect class=\"" + css_class + "\" x=\"" + num(kLabels) + "\" y=\"" +
           num(y + 5) + "\" width=\"" + num(std::max(1.0, length * scale)) + "\" height=\"16\"><title>" +
           xml_escape(labels[i] + ": " + format_number(length, 3)) + "</title></rect><text class=\"tick\" x=\"" +
           num(kLabels + length * scale + 4) + "\" y=\"" + num(y + 17) + "\">" + format_number(length, 2) +
           "</text>\n";
  }
  out += "<text class=\"axis-label\" x=\"" + num(kLabels) + "\" y=\"" + num(height - 14) + "\">" +
         xml_escape(x_label) + "</text>\n</svg>\n";
  return out;
}

}  // namespace bfhpo::report
