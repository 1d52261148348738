// Where one data set's time goes in `bfhpo infer` (issue 40 part 4): each
// stage of infer_data_set on one data set, repeated, timed by the thread's
// CPU time on one worker with one kernel thread (as infer's schedule runs a
// data set beside the others), the median of the repetitions printed with
// the smallest. The work done once a shape (the spread calibration's and
// the summary-space check's simulations) runs before the timing and is left
// out, as 1,000 data sets of one shape leave it out. On a shared machine the
// smallest is the figure to compare.
//
//   bench_infer_stages MODEL_DIR DATA.csv [repetitions=7] [draws=200] [plausible_values=99]
#include "inference/data_set_inference.hpp"
#include "inference/grid_ability_posterior.hpp"
#include "inference/person_scores.hpp"
#include "inference/posterior_predictive_check.hpp"
#include "inference/posterior_refinement.hpp"
#include "inference/summary_space_check.hpp"
#include "models/simulators/item_response_model.hpp"
#include "trials/training_threads.hpp"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace bfhpo;

namespace {

double thread_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return 1e3 * static_cast<double>(now.tv_sec) + 1e-6 * static_cast<double>(now.tv_nsec);
}

struct Stage {
  std::string name;
  std::vector<double> ms;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_infer_stages MODEL_DIR DATA.csv [repetitions=7] [draws=200] [plausible_values=99]\n");
    return 2;
  }
  const int repetitions = argc > 3 ? std::stoi(argv[3]) : 7;
  const int64_t draws = argc > 4 ? std::stoll(argv[4]) : 200;
  const int64_t plausible_values = argc > 5 ? std::stoll(argv[5]) : 99;
  auto model = inference::load_trained_model(argv[1]);
  const auto data = inference::read_response_matrix(argv[2], "", inference::response_format(model));
  const auto item_model = models::make_item_response_model(model.config.simulator);
  inference::ShapeSpreads spreads;
  inference::SummarySpaceReferences references;
  inference::RefinementOptions refinement;
  refinement.method = "importance";
  const inference::PredictiveCheckOptions check;
  inference::PersonScoreOptions persons;
  persons.plausible_values = plausible_values;

  std::vector<Stage> stages = {{"amortized draws (summary network, flow, spread)", {}},
                               {"summary-space check", {}},
                               {"draw table (every draw's ability grid)", {}},
                               {"importance step (joint k-hat; items judged alone)", {}},
                               {"model check (posterior predictive, items)", {}},
                               {"person scores", {}},
                               {"all", {}}};
  trials::for_each_on_workers(1, [&](int64_t) {
    for (int repetition = -1; repetition < repetitions; ++repetition) {  // -1: the shape's work, untimed
      std::vector<double> ms;
      const auto timed = [&](const std::function<void()>& work) {
        const double start = thread_cpu_ms();
        work();
        ms.push_back(thread_cpu_ms() - start);
      };
      inference::PosteriorDraws posterior;
      timed([&] { posterior = inference::infer_posterior(model, data, draws, 1, std::nullopt, &spreads); });
      timed([&] { inference::summary_space_check(model, data, 1, &references, posterior.summary); });
      std::optional<inference::DrawAbilityTable> table;
      timed([&] { table.emplace(inference::GridAbilityPosterior(*item_model, data), posterior.draws); });
      timed([&] {
        const auto refined = inference::refine_posterior(*item_model, data, posterior, refinement, &*table);
        if (refined.method == "importance") {
          table->select(refined.resampled);
          posterior = refined.posterior;
        }
      });
      timed([&] { inference::posterior_predictive_check(*item_model, data, posterior, check, &*table); });
      timed([&] { inference::score_persons(*item_model, data, posterior, persons, &*table); });
      double all = 0.0;
      for (double value : ms) all += value;
      ms.push_back(all);
      if (repetition < 0) continue;
      for (size_t s = 0; s < stages.size(); ++s) stages[s].ms.push_back(ms[s]);
    }
  });
  std::printf("%s: %lld persons x %lld items, %lld draws, %lld plausible values; CPU ms of one thread, %d repetitions\n",
              argv[2], static_cast<long long>(data.responses.size(0)), static_cast<long long>(data.responses.size(1)),
              static_cast<long long>(draws), static_cast<long long>(plausible_values), repetitions);
  std::printf("%-52s %10s %10s\n", "stage", "median", "smallest");
  for (auto& stage : stages) {
    std::sort(stage.ms.begin(), stage.ms.end());
    std::printf("%-52s %10.1f %10.1f\n", stage.name.c_str(), stage.ms[stage.ms.size() / 2], stage.ms.front());
  }
  return 0;
}
