#include "inference/data_set_inference.hpp"

#include "inference/user_prior.hpp"
#include "models/simulators/item_response_model.hpp"

#include <iomanip>
#include <sstream>

namespace bfhpo::inference {

nlohmann::json DataSetInference::summary_json() const {
  auto out = posterior.summary_json();
  out["prior"] = prior;
  if (refinement) out["refinement"] = *refinement;
  if (predictive && summary_space)
    out["model_check"] = {{"items", predictive->to_json()}, {"summary_space", summary_space->to_json()}};
  return out;
}

std::string DataSetInference::path() const {
  return refinement ? (*refinement)["method"].get<std::string>() : "amortized";
}

bool DataSetInference::needs_chains() const {
  const bool outside = summary_space && summary_space->outside();
  return path() == "amortized" &&
         (outside || (refinement && !(*refinement)["importance_reliable"].get<bool>() &&
                      !(*refinement)["items_stand"].get<bool>()));
}

DataSetInference infer_data_set(TrainedModel& model, const ResponseMatrix& data, const InferenceOptions& options,
                                const SayLine& say, SummarySpaceReferences* references, ShapeSpreads* spreads) {
  DataSetInference result;
  result.posterior = infer_posterior(model, data, options.draws, options.seed + options.data_set, std::nullopt, spreads);
  for (const auto& warning : result.posterior.warnings) say("warning: " + warning);
  if (options.check)
    result.summary_space = summary_space_check(model, data, options.check->seed, references, result.posterior.summary);
  const auto item_model = models::make_item_response_model(model.config.simulator);
  auto target = model.config.simulator;  // the model the exact-posterior step targets: the user's prior
  if (options.prior) target.priors = *options.prior;
  const auto target_model = models::make_item_response_model(target);
  result.prior = {{"amortized", model.config.simulator.priors_json()}, {"posterior", model.config.simulator.priors_json()}};
  if (options.prior)
    say("prior: the amortized draws come from the training prior (" + prior_text(model.config.simulator) +
        "); the exact-posterior step targets " + prior_text(target));
  std::optional<RefinementOptions> refinement = options.refinement;
  if (refinement) refinement->seed += options.data_set;
  std::optional<PredictiveCheckOptions> check = options.check;
  if (check) check->seed += options.data_set;
  std::optional<PersonScoreOptions> persons = options.persons;
  if (persons) persons->seed += options.data_set;
  if (refinement && refinement->method == "auto" && result.summary_space && result.summary_space->outside())
    refinement->method = "mcmc";
  // The draws' grid posteriors, once for the importance step, the check and the person scores (when they fit
  // and no chains replace the draws first).
  std::optional<DrawAbilityTable> abilities;
  if ((refinement || options.check || options.persons) && !(refinement && refinement->method == "mcmc") &&
      DrawAbilityTable::fits(result.posterior.draws.size(1), data.responses.size(0)))
    abilities.emplace(GridAbilityPosterior(*item_model, data), result.posterior.draws);
  if (refinement) {
    auto refined = refine_posterior(*target_model, data, result.posterior, *refinement, abilities ? &*abilities : nullptr);
    if (refined.method == "importance" && abilities) abilities->select(refined.resampled);
    if (refined.method == "mcmc") abilities.reset();  // new draws
    say(refined.line());
    if (const auto warning = refined.warning()) say("warning: " + *warning);
    if (refined.method == "mcmc")
      refined.posterior.log_prob = amortized_log_prob(model, data, refined.posterior.draws, result.posterior);
    result.pareto_k = refined.pareto_k;
    if (refined.items) result.item_coverage_loss = refined.items->largest_coverage_loss;
    result.refinement = refined.to_json();
    if (refined.method != "amortized" || refined.reliable()) result.prior["posterior"] = target.priors_json();
    else if (options.prior)
      say("warning: the draws left amortized keep the training prior, not --prior's. Fix: --refine auto (chains "
          "target --prior's)");
    result.posterior = std::move(refined.posterior);
  }
  if (options.check) {
    result.predictive =
        posterior_predictive_check(*item_model, data, result.posterior, *check, abilities ? &*abilities : nullptr);
    say(model_check_line(*result.predictive, *result.summary_space));
    for (const auto& warning : result.predictive->warnings()) say("warning: " + warning);
    if (const auto warning = result.summary_space->warning()) say("warning: " + *warning);
  }
  if (options.persons)
    result.persons = score_persons(*item_model, data, result.posterior, *persons, abilities ? &*abilities : nullptr);
  return result;
}

std::string model_check_line(const PredictiveCheck& predictive, const SummarySpaceCheck& summary_space) {
  std::ostringstream line;
  line << std::setprecision(3) << "model check: " << predictive.misfitting_items().size() << " of "
       << predictive.items.size() << " items misfit (at most "
       << predictive.alpha * static_cast<double>(predictive.items.size())
       << " expected by chance when the model fits; " << predictive.replications
       << " replications); ";
  if (!summary_space.skipped.empty())
    line << "the summary-space check left out (see its warning)";
  else
    line << "the data's summary lies farther out than " << summary_space.percentile
         << "% of simulated data sets' (p = " << summary_space.p_value << ")";
  return line.str();
}

}  // namespace bfhpo::inference
