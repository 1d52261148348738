// The Pareto front of a study of several objectives (Optuna's best_trials,
// hpo/pareto_front.hpp) as the text `bfhpo status` and `bfhpo optimize`'s
// summary print: one line a trial on the front, its value of each objective
// and its params.
#pragma once

#include "hpo/frozen_trial.hpp"
#include "hpo/study_spec.hpp"

#include <string>
#include <vector>

namespace bfhpo::report {

// "Pareto front (minimize val_nll, minimize measured_peak_mb): 3 trials\n
//    trial 4: val_nll 1.23, measured_peak_mb 512 params {...}\n ..." or a line saying none yet.
std::string pareto_front_text(const hpo::StudySpec& spec, const std::vector<hpo::FrozenTrial>& trials);

}  // namespace bfhpo::report
