#include "inference/posterior_predictive_check.hpp"

#include "common/csv_field.hpp"
#include "common/float_lanes.hpp"
#include "common/json_number.hpp"
#include "common/number_format.hpp"
#include "common/user_error.hpp"
#include "inference/grid_ability_posterior.hpp"
#include "inference/marginal_likelihood.hpp"
#include "models/simulators/seed_mix.hpp"
#include "trials/training_threads.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <utility>

#pragma GCC diagnostic ignored "-Wpsabi"  // common/float_lanes.hpp says why

namespace bfhpo::inference {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Rest scores are means of multiples of 1 / (K - 1): two that are equal as
// numbers differ by rounding only, far below this.
constexpr double kTieTolerance = 1e-9;
// A sum of squared deviations of rest scores at most this is no variance (their rounding, far below it).
constexpr double kNoVariance = 1e-12;
// A pair's variance at most this is none (an item every person of the pair answered alike).
constexpr double kNoPairVariance = 1e-12;

double mean_of(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// Linear interpolation between order statistics of sorted, non-empty values.
double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

// The values a rest score can take in one mask, sorted: a person who answered
// o other items and scored s on them (in categories, 0 to o (K - 1)) has the
// rest score s / (o (K - 1)). Bin offset[o] + s is that value's; rank[bin]
// its place among all of them, value[rank] the value itself.
struct RestScoreBins {
  std::vector<int64_t> offset, rank;
  std::vector<double> value;

  RestScoreBins(const std::vector<int64_t>& others, int64_t n_categories) {
    const int64_t most = std::max<int64_t>(0, others.empty() ? 0 : *std::max_element(others.begin(), others.end()));
    std::vector<bool> present(static_cast<size_t>(most) + 1, false);
    for (int64_t o : others)
      if (o >= 1) present[static_cast<size_t>(o)] = true;
    offset.assign(static_cast<size_t>(most) + 1, -1);
    std::vector<std::pair<double, int64_t>> by_value;  // (value, bin)
    for (int64_t o = 1; o <= most; ++o) {
      if (!present[static_cast<size_t>(o)]) continue;
      offset[static_cast<size_t>(o)] = static_cast<int64_t>(by_value.size());
      const double top = static_cast<double>(o * (n_categories - 1));
      for (int64_t s = 0; s <= o * (n_categories - 1); ++s)
        by_value.emplace_back(static_cast<double>(s) / top, static_cast<int64_t>(by_value.size()));
    }
    std::sort(by_value.begin(), by_value.end());
    rank.assign(by_value.size(), 0);
    for (size_t i = 0; i < by_value.size(); ++i) {
      rank[static_cast<size_t>(by_value[i].second)] = static_cast<int64_t>(i);
      value.push_back(by_value[i].first);
    }
  }
  size_t size() const { return value.size(); }
};

// Linear interpolation at q among n values counted into sorted bins (n > 0).
double binned_quantile(const int64_t* counts, const std::vector<double>& value, int64_t n, double q) {
  const double position = q * static_cast<double>(n - 1);
  const auto below = static_cast<int64_t>(std::floor(position));
  const int64_t above = std::min(below + 1, n - 1);
  double at_below = 0.0, at_above = 0.0;
  int64_t seen = 0;
  for (size_t b = 0; b < value.size(); ++b) {
    if (counts[b] == 0) continue;
    if (seen <= below && below < seen + counts[b]) at_below = value[b];
    if (seen <= above && above < seen + counts[b]) {
      at_above = value[b];
      break;
    }
    seen += counts[b];
  }
  return at_below + (position - static_cast<double>(below)) * (at_above - at_below);
}

// Linear interpolation at q among `values` (non-empty), by selection; reorders them.
double selected_quantile(std::vector<double>& values, double q) {
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(below), values.end());
  const double at_below = values[below];
  if (below + 1 >= values.size()) return at_below;
  const double at_above = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(below) + 1, values.end());
  return at_below + (position - static_cast<double>(below)) * (at_above - at_below);
}

// The statistics of matrices that share one mask (item_statistic_names'
// order), a matrix at a time from its categories [P, J] (uint8, 0 where
// missing), item by item. What depends on the mask alone is found once: each
// person's other answered items, the rest scores' bins, the persons who
// answered each pair of items.
//
// Where RestScoreBins' bins are no more than the persons, one pass over the
// persons counts each into its category and its rest score's bin (with the
// bin's score sum), and everything else comes from those counts: the
// correlation's centred sums bin by bin (a bin's persons share one rest
// score) and category by category, the tertiles by counting. Where the bins
// are more (many missing patterns of a long scale with many categories),
// passes over the persons centre the sums and the tertiles select among
// their rests (nth_element).
//
// pair_r_sd from pairwise sums over the persons who answered both items. A
// correlation does not see the categories' scale, so the sums are of the
// categories themselves: integers, which float32 adds exactly while they
// stay below 2^24 (P (K - 1)^2 < 16.7 million), in any order: dot
// products of the items' columns, eight persons at a time.
class MatrixStatistics {
 public:
  MatrixStatistics(const torch::Tensor& mask, int64_t n_categories)
      : persons_(mask.size(0)),
        items_(mask.size(1)),
        n_categories_(n_categories),
        padded_persons_((persons_ + kFloatLanes - 1) / kFloatLanes * kFloatLanes),
        answered_(answered_of(mask)),
        others_(others_of(answered_, persons_, items_)),
        bins_(others_, n_categories),
        counted_(static_cast<int64_t>(bins_.size()) <= persons_),
        complete_(std::all_of(answered_.begin(), answered_.end(), [](float a) { return a > 0.0f; })) {
    total_.resize(static_cast<size_t>(persons_));
    category_count_.resize(static_cast<size_t>(items_ * n_categories));
    in_category_count_.resize(static_cast<size_t>(items_ * n_categories));
    bin_count_.resize(counted_ ? static_cast<size_t>(items_) * bins_.size() : 0);
    bin_categories_.resize(bin_count_.size());
    values_.reserve(static_cast<size_t>(persons_));
    for (auto* sums : {&cross_, &sum_, &square_}) sums->resize(static_cast<size_t>(items_ * items_));
    for (auto* columns : {&columns_, &square_columns_, &mask_columns_})
      columns->assign(static_cast<size_t>(items_ * padded_persons_), 0.0f);
    for (int64_t p = 0; p < persons_; ++p)
      for (int64_t j = 0; j < items_; ++j)
        mask_columns_[static_cast<size_t>(j * padded_persons_ + p)] = answered_[static_cast<size_t>(p * items_ + j)];
    // The persons who answered both of each pair (of item j alone on the diagonal), exact counts.
    pair_count_.resize(static_cast<size_t>(items_ * items_));
    const int64_t lanes = padded_persons_ / kFloatLanes;
    for (int64_t j = 0; j < items_; ++j)
      for (int64_t k = 0; k < items_; ++k)
        pair_count_[static_cast<size_t>(j * items_ + k)] =
            dot_in_lanes(mask_columns_.data() + j * padded_persons_, mask_columns_.data() + k * padded_persons_, lanes);
  }

  // The statistics of `categories` [P, J] into `out` [S, J] (row-major).
  void compute(const uint8_t* categories, double* out) {
    item_and_rest(categories, out);
    pair_correlation_sd(categories, out + (n_categories_ + 3) * items_);
  }

 private:
  static std::vector<float> answered_of(const torch::Tensor& mask) {
    const auto m = mask.to(torch::kFloat32).contiguous();
    return std::vector<float>(m.data_ptr<float>(), m.data_ptr<float>() + m.numel());
  }
  static std::vector<int64_t> others_of(const std::vector<float>& answered, int64_t persons, int64_t items) {
    std::vector<int64_t> others(static_cast<size_t>(persons), 0);
    for (int64_t p = 0; p < persons; ++p) {
      double count = 0.0;
      for (int64_t j = 0; j < items; ++j) count += answered[static_cast<size_t>(p * items + j)];
      others[static_cast<size_t>(p)] = static_cast<int64_t>(count) - 1;
    }
    return others;
  }
  bool answered(int64_t p, int64_t j) const { return answered_[static_cast<size_t>(p * items_ + j)] > 0.0f; }

  // p0..p{K-1}, item_rest_r, low_mean and high_mean into out's rows 0..K+2.
  void item_and_rest(const uint8_t* matrix, double* out) {
    const int64_t persons = persons_, items = items_, n_categories = n_categories_;
    const double top = static_cast<double>(n_categories - 1);
    const auto stat = [&](int64_t s, int64_t j) -> double& { return out[s * items + j]; };
    const auto rest_of = [&](int64_t p, int64_t category) {
      return static_cast<double>(total_[static_cast<size_t>(p)] - category) /
             (top * static_cast<double>(others_[static_cast<size_t>(p)]));
    };
    // One pass over the persons, a row at a time, counts every item's categories and (where the bins are
    // counted) its rest scores' bins: persons in the correlation and tertiles are those who answered the
    // item and at least one other.
    const int64_t n_bins = counted_ ? static_cast<int64_t>(bins_.size()) : 0;
    std::fill(category_count_.begin(), category_count_.end(), 0);
    std::fill(in_category_count_.begin(), in_category_count_.end(), 0);
    std::fill(bin_count_.begin(), bin_count_.end(), 0);
    std::fill(bin_categories_.begin(), bin_categories_.end(), 0);
    for (int64_t p = 0; p < persons; ++p) {
      const uint8_t* row = matrix + p * items;
      int64_t total = 0;
      for (int64_t j = 0; j < items; ++j) total += row[j];
      total_[static_cast<size_t>(p)] = total;
      const int64_t o = others_[static_cast<size_t>(p)];
      const int64_t* rank = counted_ && o >= 1 ? bins_.rank.data() + bins_.offset[static_cast<size_t>(o)] + total : nullptr;
      for (int64_t j = 0; j < items; ++j) {
        if (!answered(p, j)) continue;
        const int64_t category = row[j];
        ++category_count_[static_cast<size_t>(j * n_categories + category)];
        if (o < 1) continue;
        ++in_category_count_[static_cast<size_t>(j * n_categories + category)];
        if (rank) {
          const auto bin = static_cast<size_t>(j * n_bins + rank[-category]);
          ++bin_count_[bin];
          bin_categories_[bin] += category;
        }
      }
    }
    for (int64_t j = 0; j < items; ++j) {
      const int64_t* category_count = category_count_.data() + j * n_categories;
      const int64_t* in_category_count = in_category_count_.data() + j * n_categories;
      const int64_t* bin_count = bin_count_.data() + j * n_bins;
      const int64_t* bin_categories = bin_categories_.data() + j * n_bins;
      if (!counted_) {
        values_.clear();
        for (int64_t p = 0; p < persons; ++p)
          if (answered(p, j) && others_[static_cast<size_t>(p)] >= 1) values_.push_back(rest_of(p, matrix[p * items + j]));
      }
      const double answered_j = pair_count_[static_cast<size_t>(j * items + j)];
      int64_t n = 0, categories_in = 0;
      for (int64_t k = 0; k < n_categories; ++k) {
        stat(k, j) = static_cast<double>(category_count[k]) / answered_j;
        n += in_category_count[k];
        categories_in += k * in_category_count[k];
      }
      if (n < 1) {
        stat(n_categories, j) = stat(n_categories + 1, j) = stat(n_categories + 2, j) = kNaN;
        continue;
      }
      // Pearson's r of score and rest score, from centred sums. The scores' in integers, exactly:
      // n sum k^2 - (sum k)^2 is 0 only when every score is the same (rounding of a mean of thirds is not).
      const double in_count = static_cast<double>(n);
      const double score_mean = static_cast<double>(categories_in) / top / in_count;
      int64_t category_squares = 0;
      for (int64_t k = 0; k < n_categories; ++k) category_squares += k * k * in_category_count[k];
      const double sxx = static_cast<double>(n * category_squares - categories_in * categories_in) / (in_count * top * top);
      double sxy = 0.0, syy = 0.0;
      double lower = 0.0, upper = 0.0;
      if (counted_) {
        double rest_sum = 0.0;
        for (size_t b = 0; b < bins_.size(); ++b) rest_sum += static_cast<double>(bin_count[b]) * bins_.value[b];
        const double rest_mean = rest_sum / in_count;
        for (size_t b = 0; b < bins_.size(); ++b) {
          if (bin_count[b] == 0) continue;
          const double centred = bins_.value[b] - rest_mean, count = static_cast<double>(bin_count[b]);
          syy += count * centred * centred;
          sxy += centred * (static_cast<double>(bin_categories[b]) / top - count * score_mean);
        }
        lower = binned_quantile(bin_count, bins_.value, n, 1.0 / 3.0) - kTieTolerance;
        upper = binned_quantile(bin_count, bins_.value, n, 2.0 / 3.0) + kTieTolerance;
      } else {
        double rest_sum = 0.0;
        for (double rest : values_) rest_sum += rest;
        const double rest_mean = rest_sum / in_count;
        for (int64_t p = 0; p < persons; ++p) {
          if (!answered(p, j) || others_[static_cast<size_t>(p)] < 1) continue;
          const int64_t category = matrix[p * items + j];
          const double rest = rest_of(p, category) - rest_mean;
          syy += rest * rest;
          sxy += (static_cast<double>(category) / top - score_mean) * rest;
        }
        lower = selected_quantile(values_, 1.0 / 3.0) - kTieTolerance;
        upper = selected_quantile(values_, 2.0 / 3.0) + kTieTolerance;
      }
      // Rest scores differ by at least 1 / (o (K - 1) o') where they differ: a sum of squares below
      // kNoVariance is equal rest scores' rounding.
      stat(n_categories, j) = n >= 2 && sxx > 0.0 && syy > kNoVariance ? sxy / std::sqrt(sxx * syy) : kNaN;

      // Mean score below the rest score's lower tertile and above its upper one (ties within kTieTolerance
      // in neither group).
      int64_t low_categories = 0, low_count = 0, high_categories = 0, high_count = 0;
      if (counted_) {
        for (size_t b = 0; b < bins_.size(); ++b) {
          if (bins_.value[b] < lower) {
            low_categories += bin_categories[b];
            low_count += bin_count[b];
          } else if (bins_.value[b] > upper) {
            high_categories += bin_categories[b];
            high_count += bin_count[b];
          }
        }
      } else {
        for (int64_t p = 0; p < persons; ++p) {
          if (!answered(p, j) || others_[static_cast<size_t>(p)] < 1) continue;
          const int64_t category = matrix[p * items + j];
          const double rest = rest_of(p, category);
          if (rest < lower) {
            low_categories += category;
            ++low_count;
          } else if (rest > upper) {
            high_categories += category;
            ++high_count;
          }
        }
      }
      stat(n_categories + 1, j) = static_cast<double>(low_categories) / top / static_cast<double>(low_count);
      stat(n_categories + 2, j) = static_cast<double>(high_categories) / top / static_cast<double>(high_count);
    }
  }

  // pair_r_sd into `out` [J]: per item, the sd of its correlations with each other item over the persons
  // who answered both (pairs with fewer than two such persons or no variance left out; NaN with fewer
  // than two pairs left). Its sums are dot products of the items' columns.
  void pair_correlation_sd(const uint8_t* matrix, double* out) {
    const int64_t items = items_, lanes = padded_persons_ / kFloatLanes;
    const auto column = [&](std::vector<float>& columns, int64_t j) { return columns.data() + j * padded_persons_; };
    const auto dot = [&](const float* a, const float* b) { return dot_in_lanes(a, b, lanes); };
    for (int64_t p = 0; p < persons_; ++p)
      for (int64_t j = 0; j < items; ++j) column(columns_, j)[p] = matrix[p * items + j];
    for (int64_t j = 0; j < items; ++j)
      for (int64_t k = j; k < items; ++k)
        cross_[static_cast<size_t>(j * items + k)] = cross_[static_cast<size_t>(k * items + j)] =
            dot(column(columns_, j), column(columns_, k));
    for (int64_t j = 0; j < items; ++j) {
      if (complete_) {  // every person answered every item: item j's sums are over all of them, whatever k
        const float sum = dot(column(columns_, j), column(mask_columns_, j));
        const float square = cross_[static_cast<size_t>(j * items + j)];
        std::fill(sum_.begin() + j * items, sum_.begin() + (j + 1) * items, sum);
        std::fill(square_.begin() + j * items, square_.begin() + (j + 1) * items, square);
        continue;
      }
      float* squares = column(square_columns_, j);
      const float* categories = column(columns_, j);
      for (int64_t p = 0; p < persons_; ++p) squares[p] = categories[p] * categories[p];
      for (int64_t k = 0; k < items; ++k) {
        sum_[static_cast<size_t>(j * items + k)] = dot(categories, column(mask_columns_, k));
        square_[static_cast<size_t>(j * items + k)] = dot(squares, column(mask_columns_, k));
      }
    }
    std::vector<double> r;
    r.reserve(static_cast<size_t>(items));
    for (int64_t j = 0; j < items; ++j) {
      r.clear();
      for (int64_t k = 0; k < items; ++k) {
        const auto jk = static_cast<size_t>(j * items + k), kj = static_cast<size_t>(k * items + j);
        const double n = pair_count_[jk];
        if (k == j || n < 2.0) continue;
        const double mean_j = sum_[jk] / n, mean_k = sum_[kj] / n;
        const double variance_j = square_[jk] / n - mean_j * mean_j, variance_k = square_[kj] / n - mean_k * mean_k;
        if (!(variance_j > kNoPairVariance && variance_k > kNoPairVariance)) continue;
        r.push_back((cross_[jk] / n - mean_j * mean_k) / std::sqrt(std::max(variance_j * variance_k, 1e-300)));
      }
      if (r.size() < 2) {
        out[j] = kNaN;
        continue;
      }
      double mean = 0.0;
      for (double value : r) mean += value;
      mean /= static_cast<double>(r.size());
      double squares = 0.0;
      for (double value : r) squares += (value - mean) * (value - mean);
      out[j] = std::sqrt(squares / static_cast<double>(r.size() - 1));
    }
  }

  int64_t persons_, items_, n_categories_;
  int64_t padded_persons_;       // P rounded up to whole lanes: the columns' length (zeros beyond P)
  std::vector<float> answered_;  // [P, J]: 1 where answered
  std::vector<int64_t> others_;  // [P]: the other items each person answered
  RestScoreBins bins_;
  bool counted_;
  bool complete_;  // no cell missing
  std::vector<double> pair_count_;      // [J, J]: the persons who answered both (item j's own on the diagonal)
  std::vector<float> mask_columns_;     // [J, padded P]: the mask, an item's column contiguous
  // Scratch, a matrix's: each person's total, and per item [J, K] its category counts (of all who answered
  // it, and of those in the correlation) and [J, bins] its rest-score bins' counts and category sums.
  std::vector<int64_t> total_, category_count_, in_category_count_, bin_count_, bin_categories_;
  std::vector<double> values_;
  std::vector<float> columns_, square_columns_;  // [J, padded P]: the categories and their squares
  std::vector<float> cross_, sum_, square_;       // [J, J]: sums over the persons of y_j y_k, y_j m_k, y_j^2 m_k
};

// How many of the n non-decreasing `values` are at most `at` (std::upper_bound's place): a float c is at
// most the double `at` exactly when it is at most the largest float not above `at`.
int64_t count_at_most_double(const float* values, int64_t n, double at) {
  float limit = static_cast<float>(at);
  if (static_cast<double>(limit) > at) limit = std::nextafter(limit, -std::numeric_limits<float>::infinity());
  return count_at_most(values, n, limit);
}

// The statistics [R, S, J] of replicated matrices, replication r from the
// item parameters draws[draw_of[r]] (draws [U, J, D], each set's
// replications together in draw_of). A person's ability is a node of the
// grid drawn from its conditional posterior there given that set
// (`set_rows[u]` [P, G], GridAbilityPosterior's rows of set u, summed into
// running sums once a set however many replications share it); a response
// counts the categories whose exceedance probability at that node lies
// above one uniform (tabled once a set: [U, G, J, K-1]). The uniforms are
// the splitmix64 stream of `seed` (mix_seed's n-th value, 53 bits each): a
// replication's ability, then its answered cells, a person at a time.
torch::Tensor replicated_statistics(const models::ItemResponseModel& model, const torch::Tensor& grid,
                                    const std::vector<const float*>& set_rows, const torch::Tensor& draws,
                                    const std::vector<int64_t>& draw_of, const MatrixStatistics& mask_statistics,
                                    const torch::Tensor& mask, uint64_t seed) {
  const int64_t sets = draws.size(0), persons = mask.size(0), items = mask.size(1);
  const int64_t thresholds = model.n_categories() - 1, grid_points = kAbilityGridPoints;
  const auto replications = static_cast<int64_t>(draw_of.size());
  const auto on_grid = grid.unsqueeze(0).expand({sets, grid_points});
  const auto exceed = model.exceedance_probabilities(on_grid, draws.to(torch::kFloat64)).contiguous();  // [U, G, J, K-1]
  // One set's running sums [P, G], four rows side by side (each row's sum in its own order, as alone).
  std::vector<float> cumulative(static_cast<size_t>(persons * grid_points));
  const auto sum_rows = [&](const float* rows) {
    std::copy(rows, rows + persons * grid_points, cumulative.begin());
    int64_t row = 0;
    for (; row + 4 <= persons; row += 4) {
      float* a = cumulative.data() + row * grid_points;
      float *b = a + grid_points, *c = b + grid_points, *d = c + grid_points;
      for (int64_t g = 1; g < grid_points; ++g) {
        a[g] += a[g - 1];
        b[g] += b[g - 1];
        c[g] += c[g - 1];
        d[g] += d[g - 1];
      }
    }
    for (; row < persons; ++row) {
      float* node = cumulative.data() + row * grid_points;
      for (int64_t g = 1; g < grid_points; ++g) node[g] += node[g - 1];
    }
  };
  MatrixStatistics statistics = mask_statistics;
  const auto mask_c = mask.to(torch::kFloat32).contiguous();
  const float* answered = mask_c.data_ptr<float>();
  const double* exceed_data = exceed.data_ptr<double>();
  const int64_t n_statistics = model.n_categories() + 4;
  auto out = torch::empty({replications, n_statistics, items}, torch::TensorOptions().dtype(torch::kFloat64));
  std::vector<uint8_t> matrix(static_cast<size_t>(persons * items));
  uint64_t drawn = 0;
  const auto uniform = [&] { return static_cast<double>(models::mix_seed(seed, drawn++) >> 11) * 0x1.0p-53; };
  int64_t summed = -1;  // the set whose running sums `cumulative` holds
  for (int64_t r = 0; r < replications; ++r) {
    const int64_t set = draw_of[static_cast<size_t>(r)];
    if (set != summed) {
      sum_rows(set_rows[static_cast<size_t>(set)]);
      summed = set;
    }
    for (int64_t p = 0; p < persons; ++p) {
      const float* node = cumulative.data() + p * grid_points;
      const double at = uniform() * static_cast<double>(node[grid_points - 1]);
      const int64_t g = std::min<int64_t>(grid_points - 1, count_at_most_double(node, grid_points, at));
      const double* curve = exceed_data + ((set * grid_points + g) * items) * thresholds;
      uint8_t* categories = matrix.data() + p * items;
      for (int64_t j = 0; j < items; ++j) {
        if (!(answered[p * items + j] > 0.0f)) {
          categories[j] = 0;
          continue;
        }
        const double u = uniform();
        int64_t category = 0;
        for (int64_t k = 0; k < thresholds; ++k) category += u < curve[j * thresholds + k] ? 1 : 0;
        categories[j] = static_cast<uint8_t>(category);
      }
    }
    statistics.compute(matrix.data(), out[r].data_ptr<double>());
  }
  return out;
}

// The fewest replications whose smallest tail probability 2 / (R + 1) lies below `level`.
int64_t fewest_replications_to_flag(double level) { return static_cast<int64_t>(std::ceil(2.0 / level)); }

}  // namespace

int64_t default_replications(int64_t statistics_per_item, double alpha) {
  const int64_t standard = PredictiveCheckOptions{}.replications;
  if (!(alpha > 0.0 && alpha < 1.0)) return standard;
  return std::max(standard, fewest_replications_to_flag(alpha / static_cast<double>(statistics_per_item)));
}

void check_options_valid(const PredictiveCheckOptions& options, int64_t statistics_per_item, const std::string& what) {
  if (options.replications < 2)
    throw UserError(what + ": at least 2 replications are needed. Fix: give 500 (0 leaves the check out)");
  if (!(options.alpha > 0.0 && options.alpha < 1.0))
    throw UserError(what + ": alpha must be between 0 and 1. Fix: give 0.05");
  const double level = options.alpha / static_cast<double>(statistics_per_item);
  const double smallest = 2.0 / static_cast<double>(options.replications + 1);
  if (level <= smallest)
    throw UserError(what + ": with " + std::to_string(options.replications) + " replications no tail probability " +
                    "falls below alpha / " + std::to_string(statistics_per_item) + " = " + format_number(level, 3) +
                    ", so no item could be flagged. Fix: give at least " +
                    std::to_string(fewest_replications_to_flag(level)) + " replications, or a larger alpha");
}

std::vector<std::string> item_statistic_names(int64_t n_categories) {
  std::vector<std::string> names;
  for (int64_t k = 0; k < n_categories; ++k) names.push_back("p" + std::to_string(k));
  for (const char* name : {"item_rest_r", "low_mean", "high_mean", "pair_r_sd"}) names.emplace_back(name);
  return names;
}

torch::Tensor item_statistics(const torch::Tensor& responses, const torch::Tensor& mask, int64_t n_categories) {
  if (responses.dim() == 2) return item_statistics(responses.unsqueeze(0), mask, n_categories).squeeze(0);
  const auto categories = (responses.to(torch::kFloat64) * mask.to(torch::kFloat64)).to(torch::kUInt8).contiguous();
  const int64_t matrices = categories.size(0), cells = categories.size(1) * categories.size(2);
  auto out = torch::empty({matrices, n_categories + 4, categories.size(2)}, torch::TensorOptions().dtype(torch::kFloat64));
  MatrixStatistics statistics(mask, n_categories);
  for (int64_t r = 0; r < matrices; ++r)
    statistics.compute(categories.data_ptr<uint8_t>() + r * cells, out[r].data_ptr<double>());
  return out;
}

double tail_probability(double observed, const std::vector<double>& replicated) {
  if (std::isnan(observed)) return kNaN;
  double at_least = 1.0, at_most = 1.0, defined = 1.0;
  for (double value : replicated) {
    if (std::isnan(value)) continue;
    defined += 1.0;
    at_least += value >= observed ? 1.0 : 0.0;
    at_most += value <= observed ? 1.0 : 0.0;
  }
  return std::min(1.0, 2.0 * std::min(at_least, at_most) / defined);
}

const ItemStatisticCheck& ItemCheck::worst() const {
  size_t worst = 0;
  for (size_t s = 1; s < statistics.size(); ++s)
    if (statistics[s].tail_probability < statistics[worst].tail_probability || std::isnan(statistics[worst].tail_probability))
      worst = s;
  return statistics[worst];
}

std::vector<std::string> PredictiveCheck::misfitting_items() const {
  std::vector<std::string> names;
  for (const auto& item : items)
    if (item.misfit) names.push_back(item.item);
  return names;
}

json PredictiveCheck::to_json() const {
  json item_array = json::array();
  for (const auto& item : items) {
    json statistics = json::object();
    for (const auto& s : item.statistics)
      statistics[s.statistic] = {{"observed", number_or_null(s.observed)},
                                 {"replicated_mean", number_or_null(s.replicated_mean)},
                                 {"replicated_q2.5", number_or_null(s.replicated_q025)},
                                 {"replicated_q97.5", number_or_null(s.replicated_q975)},
                                 {"tail_probability", number_or_null(s.tail_probability)}};
    item_array.push_back({{"item", item.item}, {"misfit", item.misfit}, {"statistics", statistics}});
  }
  return {{"replications", replications},
          {"alpha", alpha},
          {"per_statistic_level", per_statistic_level},
          {"misfitting", misfitting_items()},
          {"items", item_array}};
}

std::string PredictiveCheck::to_csv() const {
  std::ostringstream out;
  out << std::setprecision(10)
      << "item,statistic,observed,replicated_mean,replicated_q2.5,replicated_q97.5,tail_probability,misfit\n";
  const auto cell = [&](double value) {
    if (std::isnan(value))
      out << ",NA";
    else
      out << "," << value;
  };
  for (const auto& item : items)
    for (const auto& s : item.statistics) {
      out << csv_field(item.item) << "," << s.statistic;
      for (double value : {s.observed, s.replicated_mean, s.replicated_q025, s.replicated_q975, s.tail_probability})
        cell(value);
      out << "," << (item.misfit ? "true" : "false") << "\n";
    }
  return out.str();
}

std::vector<std::string> PredictiveCheck::warnings() const {
  std::vector<std::string> lines;
  for (const auto& item : items) {
    if (!item.misfit) continue;
    const auto& s = item.worst();
    lines.push_back("model check: item '" + item.item + "' misfits: " + s.statistic + " " + format_number(s.observed, 3) +
                    " observed, " + format_number(s.replicated_mean, 3) + " replicated (95% of replications in " +
                    format_number(s.replicated_q025, 3) + " to " + format_number(s.replicated_q975, 3) +
                    "), tail probability " + format_number(s.tail_probability, 3) + " < " +
                    format_number(per_statistic_level, 3));
  }
  return lines;
}

PredictiveCheck posterior_predictive_check(const models::ItemResponseModel& model, const ResponseMatrix& data,
                                           const PosteriorDraws& posterior, const PredictiveCheckOptions& options,
                                           const DrawAbilityTable* table) {
  const int64_t n_categories = model.n_categories();
  const auto names = item_statistic_names(n_categories);
  const auto n_statistics = static_cast<int64_t>(names.size());
  check_options_valid(options, n_statistics, "posterior predictive check");
  torch::NoGradGuard no_grad;
  const auto observed_tensor = item_statistics(data.responses, data.mask, n_categories);
  const GridAbilityPosterior abilities(model, data);
  const MatrixStatistics mask_statistics(data.mask, n_categories);  // its mask's part, copied by each chunk
  const int64_t n_draws = posterior.draws.size(1);
  // Replications simulated at once: their [R, P, G] ability table and [R, G, J, K-1] response curves each
  // within kGridTableElements. Each chunk has its own uniforms and the chunks share the cores (one BLAS
  // thread each, no waiting on each other's small products), so the check is the same whatever the
  // number of cores.
  const int64_t curve_elements = kAbilityGridPoints * data.responses.size(1) * (n_categories - 1);
  const int64_t at_once = std::max<int64_t>(
      1, std::min(kGridTableElements / (data.responses.size(0) * kAbilityGridPoints), kGridTableElements / curve_elements));
  const int64_t chunks = (options.replications + at_once - 1) / at_once;
  std::vector<torch::Tensor> chunk_statistics(static_cast<size_t>(chunks));
  const auto replicate_chunk = [&](int64_t chunk) {
    const int64_t start = chunk * at_once, count = std::min(at_once, options.replications - start);
    std::vector<int64_t> chosen, draw_of;  // the draws this chunk uses, and each replication's among them
    for (int64_t r = start; r < start + count; ++r) {
      const int64_t draw = r * n_draws / options.replications;
      if (chosen.empty() || chosen.back() != draw) chosen.push_back(draw);
      draw_of.push_back(static_cast<int64_t>(chosen.size()) - 1);
    }
    const auto chosen_index = torch::tensor(chosen, torch::kLong);
    const auto params = posterior.draws.index_select(1, chosen_index).transpose(0, 1);
    // The sets' grid posteriors: the table's rows where the caller holds them, else computed for the chunk.
    const auto computed = table ? torch::Tensor() : abilities(params);
    std::vector<const float*> set_rows;
    for (size_t u = 0; u < chosen.size(); ++u)
      set_rows.push_back(table ? table->draw_rows(chosen[u])
                               : computed.data_ptr<float>() + static_cast<int64_t>(u) * computed[0].numel());
    chunk_statistics[static_cast<size_t>(chunk)] =
        replicated_statistics(model, abilities.grid(), set_rows, params, draw_of, mask_statistics, data.mask,
                              models::mix_seed(options.seed, 0x50505043ULL + static_cast<uint64_t>(chunk)));
  };
  trials::for_each_on_workers(chunks, replicate_chunk);
  const auto replicated_tensor = torch::cat(chunk_statistics);  // [R, S, J]
  const auto obs = observed_tensor.accessor<double, 2>();
  const auto rep = replicated_tensor.accessor<double, 3>();

  PredictiveCheck check;
  check.replications = options.replications;
  check.alpha = options.alpha;
  check.per_statistic_level = options.alpha / static_cast<double>(n_statistics);
  for (size_t j = 0; j < data.item_names.size(); ++j) {
    ItemCheck item{data.item_names[j], {}, false};
    for (int64_t s = 0; s < n_statistics; ++s) {
      std::vector<double> values;
      for (int64_t r = 0; r < options.replications; ++r)
        if (!std::isnan(rep[r][s][static_cast<int64_t>(j)])) values.push_back(rep[r][s][static_cast<int64_t>(j)]);
      ItemStatisticCheck statistic{names[static_cast<size_t>(s)], obs[s][static_cast<int64_t>(j)], kNaN, kNaN, kNaN,
                                   kNaN};
      statistic.tail_probability = tail_probability(statistic.observed, values);
      if (!values.empty()) {
        statistic.replicated_mean = mean_of(values);
        std::sort(values.begin(), values.end());
        statistic.replicated_q025 = sorted_quantile(values, 0.025);
        statistic.replicated_q975 = sorted_quantile(values, 0.975);
      }
      item.misfit = item.misfit || statistic.tail_probability < check.per_statistic_level;
      item.statistics.push_back(statistic);
    }
    check.items.push_back(item);
  }
  return check;
}

}  // namespace bfhpo::inference
