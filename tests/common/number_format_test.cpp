#include <catch2/catch.hpp>

#include "common/number_format.hpp"

#include <cmath>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace bfhpo;

namespace {

// What an ostream at `significant` digits writes: the CSV writers' text before append_number.
std::string streamed(double value, int significant) {
  std::ostringstream out;
  out << std::setprecision(significant) << value;
  return out.str();
}

}  // namespace

TEST_CASE("append_number writes what an ostream at that precision writes", "[number_format]") {
  std::vector<double> values{0.0, -0.0, 1.0, -1.5, 0.1, 1e-4, 9.99999999995e-5, 123456789.0, 1234567890123.0, 1e-300,
                             5e-324, 1e300, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 generator(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < 2000; ++i) {
    const double value = normal(generator) * std::pow(10.0, static_cast<double>(i % 41 - 20));
    values.push_back(value);
    values.push_back(static_cast<float>(value));  // the draws' CSV writes floats
  }
  for (const int significant : {9, 10}) {
    std::string appended = "x";
    std::string expected = "x";
    for (const double value : values) {
      append_number(appended, value, significant);
      appended += ',';
      expected += streamed(value, significant) + ',';
    }
    INFO(significant << " digits");
    CHECK(appended == expected);
  }
}
