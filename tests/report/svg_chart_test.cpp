#include "report/svg_chart.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <regex>

using namespace bfhpo::report;

TEST_CASE("nice ticks are evenly spaced steps of 1, 2 or 5 x 10^n inside the range") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> exponent(-6.0, 6.0), u(0.0, 1.0);
  for (int i = 0; i < 500; ++i) {
    const double scale = std::pow(10.0, exponent(rng));
    const double low = (u(rng) - 0.5) * scale, high = low + (0.01 + u(rng)) * scale;
    const auto ticks = nice_ticks({low, high});
    REQUIRE(ticks.size() >= 2);
    REQUIRE(ticks.size() <= 11);
    const double step = ticks[1] - ticks[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
    CHECK((std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 5) < 1e-6 ||
           std::abs(mantissa - 10) < 1e-6));
    for (size_t k = 0; k < ticks.size(); ++k) {
      CHECK(ticks[k] >= low - 1e-9 * step);
      CHECK(ticks[k] <= high + 1e-9 * step);
      if (k > 0) CHECK(ticks[k] - ticks[k - 1] == Approx(step).epsilon(1e-6));
    }
  }
}

TEST_CASE("points land inside the frame at their data coordinates; text is escaped") {
  SvgChart chart("a <b> & \"c\"", "x", "y", {0, 10}, {0, 100}, 540, 300);
  chart.points({0, 5, 10}, {0, 50, 100}, "p", {"first", "", "<last>"}, {7, 8, 9});
  chart.points({std::nan("")}, {1}, "p");  // skipped
  const std::string svg = chart.svg();
  CHECK_THAT(svg, Catch::Contains("a &lt;b&gt; &amp; &quot;c&quot;"));
  CHECK_THAT(svg, Catch::Contains("<title>&lt;last&gt;</title>"));
  const std::regex circle("<circle class=\"p\" cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"[^>]*data-trial=\"([0-9]+)\"");
  std::vector<double> cx, cy;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it) {
    cx.push_back(std::stod((*it)[1]));
    cy.push_back(std::stod((*it)[2]));
  }
  REQUIRE(cx.size() == 3);
  // Linear in x, inverted in y (SVG's y grows downwards), the middle point in the middle.
  CHECK(cx[0] < cx[1]);
  CHECK(cx[1] < cx[2]);
  CHECK(cy[0] > cy[1]);
  CHECK(cy[1] > cy[2]);
  CHECK(cx[1] == Approx((cx[0] + cx[2]) / 2).margin(0.1));  // coordinates are written with one decimal
  CHECK(cy[1] == Approx((cy[0] + cy[2]) / 2).margin(0.1));
  for (size_t i = 0; i < 3; ++i) {
    CHECK(cx[i] >= 0);
    CHECK(cx[i] <= 540);
    CHECK(cy[i] >= 0);
    CHECK(cy[i] <= 300);
  }
}

TEST_CASE("a legend sits in a row below the chart, outside the plot frame, whatever the marks") {
  SvgChart chart("t", "x", "y", {0, 10}, {0, 100}, 540, 300);
  chart.points({0, 10}, {100, 100}, "p");  // marks in the frame's top-left and top-right corners
  chart.legend({{"first", "a"}, {"second", "b"}});
  const std::string svg = chart.svg();
  const std::regex frame("<rect class=\"frame\" x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9.]+)\" height=\"([0-9.]+)\"");
  std::smatch f;
  REQUIRE(std::regex_search(svg, f, frame));
  const double frame_bottom = std::stod(f[2]) + std::stod(f[4]);
  const std::regex swatch("<rect class=\"[a-z]+ legend-swatch\" x=\"[0-9.]+\" y=\"([0-9.]+)\" width=\"10\" height=\"10\"");
  const std::regex axis_label("<text class=\"axis-label\" x=\"[0-9.]+\" y=\"([0-9.]+)\"");
  std::smatch label;
  REQUIRE(std::regex_search(svg, label, axis_label));
  int swatches = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), swatch); it != std::sregex_iterator(); ++it, ++swatches) {
    const double top = std::stod((*it)[1]);
    CHECK(top > frame_bottom);
    CHECK(top > std::stod(label[1]));  // below the x axis's label too
    CHECK(top + 10 <= 320);           // inside the grown SVG
  }
  CHECK(swatches == 2);
  CHECK_THAT(svg, Catch::Contains("height=\"320\" viewBox=\"0 0 540 320\""));
  SvgChart plain("t", "x", "y", {0, 10}, {0, 100}, 540, 300);
  CHECK_THAT(plain.svg(), Catch::Contains("height=\"300\" viewBox=\"0 0 540 300\""));
}

TEST_CASE("range_of pads the finite values and widens a constant") {
  const Range r = range_of({1.0, std::nan(""), 3.0, INFINITY}, 0.5);
  CHECK(r.low == 0.0);
  CHECK(r.high == 4.0);
  const Range flat = range_of({2.0, 2.0});
  CHECK(flat.low < 2.0);
  CHECK(flat.high > 2.0);
}
