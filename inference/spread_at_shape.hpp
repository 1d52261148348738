// The spread calibration (posterior_spread.hpp) measured at a data set's own
// shape. An estimator's validation averages the z sd over every shape it
// trained on, and a shape's own differs: grm-k5's log a, z sd 0.91 on
// average over 5-10 items and 200-800 persons, covered 81.2% in 80%
// intervals at 500 x 10 when scaled by it (80.1% scaled at that shape); a
// K 6 estimator whose validation said 0.94 for log a covered 67.5% at
// 450 x 8 (77.9% scaled at that shape). So infer measures it
// where the data are: data sets simulated from the estimator's prior at the
// data's persons x items and missing share (missing completely at random,
// as in training; the share to the percent), as many flow draws for each
// of their items as infer gives the data (at most kMostSpreadDraws), and
// per parameter the scale of
// PosteriorSpread: for each simulated item, the scale about its draws'
// mean that just takes the truth into the scaled draws' central 80%
// interval, and over the items the 80% quantile of those scales, so that
// 80% of the simulated truths lie in the scaled intervals. The draws'
// number matters: the sample quantiles of 100 draws are noisier than those
// of 1,000, and a scale found with 100 draws (grm-k5's log a at 500 x 10:
// 0.94-0.95) left the intervals of 1,000 draws 3 points wide (0.905 with
// 1,000 draws, which covered 80.1%). Beyond 400 draws the difference is
// about a percent of the scale, and the draws cost the most: 400 at most
// (a 300 x 5 file's 1,000 draws took its infer from 4.9 to 13.2 s).
//
// Enough data sets that kSpreadItems items give each scale (about 3% of
// scale its sd, posterior_spread.hpp), at least kFewestSpreadSets and
// at most kMostSpreadSets: 64 sets of 500 x 20. Data with no observed cell
// cannot be simulated: the flow's own spread. Deterministic: the same
// model, shape and draws give the same spread, on any number of cores,
// whatever the data's seed. The memory is that of the summary network on
// a batch of at most 65,536 cells and the flow's draws of at most 65,536
// rows (or one set and its draws: what the data set itself needs).
#pragma once

#include "inference/posterior_inference.hpp"
#include "inference/shape_cache.hpp"

#include <cstdint>

namespace bfhpo::inference {

inline constexpr int64_t kSpreadItems = 1280;
inline constexpr int64_t kFewestSpreadSets = 16;
inline constexpr int64_t kMostSpreadSets = 512;
inline constexpr int64_t kMostSpreadDraws = 400;

// The scales for `draws` draws an item (those infer gives the data set; kMostSpreadDraws for more).
PosteriorSpread spread_at_shape(TrainedModel& model, int64_t persons, int64_t items, double missing_share,
                                int64_t draws);

// The spreads of one model, computed once a (persons, items, missing share, draws).
using ShapeSpreads = ShapeCache<PosteriorSpread>;

}  // namespace bfhpo::inference
