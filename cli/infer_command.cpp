#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "models/simulators/item_response_model.hpp"
#include "trials/posterior_inference.hpp"
#include "trials/posterior_predictive_check.hpp"
#include "trials/posterior_refinement.hpp"
#include "trials/summary_space_check.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

namespace bfhpo::cli {
namespace {

// Whether two paths name one file: the same device and inode when both
// exist (through links and other spellings), else the same resolved path.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat first{}, second{};
  if (::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0)
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
  std::error_code error;
  const auto resolved_a = std::filesystem::weakly_canonical(a, error);
  const auto resolved_b = std::filesystem::weakly_canonical(b, error);
  return !error && resolved_a == resolved_b;
}

// An output that names an input, or the other output, would destroy it: refused before any work.
void refuse_outputs_over_inputs(const VerbArgs& args, const std::vector<std::filesystem::path>& inputs) {
  std::vector<std::string> outputs;
  for (const char* option : {"out", "draws-out", "check-out"})
    if (args.count(option)) outputs.push_back(option);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string output = args[outputs[i]].as<std::string>();
    for (const auto& input : inputs)
      if (same_file(output, input))
        throw UserError("bfhpo infer: --" + outputs[i] + " " + output + " names an input, " + input.string() +
                        ", which writing would destroy. Fix: give --" + outputs[i] + " another file");
    for (size_t k = 0; k < i; ++k)
      if (same_file(args[outputs[k]].as<std::string>(), output))
        throw UserError("bfhpo infer: --" + outputs[k] + " and --" + outputs[i] + " name the same file, " +
                        args[outputs[k]].as<std::string>() + ". Fix: give each output a file of its own");
  }
}

// The model check's options, refused before any work when no flag could come of them.
std::optional<trials::PredictiveCheckOptions> check_options(const VerbArgs& args, int64_t n_categories) {
  const auto replications = args["check-replications"].as<int64_t>();
  if (replications == 0) {
    if (args.count("check-out"))
      throw UserError("bfhpo infer: --check-out with --check-replications 0: no model check to write. Fix: leave "
                      "out one of them");
    return std::nullopt;
  }
  trials::PredictiveCheckOptions options{replications, args["check-alpha"].as<double>(), args["seed"].as<uint64_t>()};
  trials::check_options_valid(options, static_cast<int64_t>(trials::item_statistic_names(n_categories).size()),
                              "bfhpo infer: --check-replications " + std::to_string(replications) +
                                  " --check-alpha " + std::to_string(options.alpha));
  return options;
}

// One line: how many items misfit against how many chance gives, where the data's summary lies.
std::string model_check_line(const trials::PredictiveCheck& predictive, const trials::SummarySpaceCheck& summary_space) {
  std::ostringstream line;
  line << std::setprecision(3) << "model check: " << predictive.misfitting_items().size() << " of "
       << predictive.items.size() << " items misfit (at most " << predictive.alpha * static_cast<double>(predictive.items.size())
       << " expected by chance when the model fits; " << predictive.replications
       << " replications); the data's summary lies farther out than " << summary_space.percentile
       << "% of simulated data sets' (p = " << summary_space.p_value << ")";
  return line.str();
}

// The refinement's options; none with --refine off.
std::optional<trials::RefinementOptions> refinement_options(const VerbArgs& args) {
  const auto method = args["refine"].as<std::string>();
  if (method == "off") return std::nullopt;
  trials::RefinementOptions options{method, args["refine-chains"].as<int64_t>(), args["refine-warmup"].as<int64_t>(),
                                    args["refine-sweeps"].as<int64_t>(), args["seed"].as<uint64_t>()};
  trials::check_refinement_options(options, "bfhpo infer: --refine " + method);
  return options;
}

}  // namespace

int run_infer(const VerbArgs& args) {
  if (!args.count("data"))
    throw UserError("bfhpo infer: missing --data. Fix: bfhpo infer " + std::string(find_verb("infer")->usage));
  const std::string format = args["format"].as<std::string>();
  if (format != "csv" && format != "json")
    throw UserError("bfhpo infer: --format '" + format + "' is unknown. Fix: use csv or json");

  auto model = trials::load_trained_model(args["study"].as<std::string>(), storage_override(args));
  const std::string data_file = args["data"].as<std::string>();
  std::vector<std::filesystem::path> inputs = model.files;
  inputs.emplace_back(data_file);
  refuse_outputs_over_inputs(args, inputs);
  const auto data = trials::read_response_matrix(
      data_file, args.count("id-column") ? args["id-column"].as<std::string>() : "", trials::response_format(model));
  const auto check = check_options(args, trials::response_format(model).n_categories);
  const auto refinement = refinement_options(args);
  auto posterior = trials::infer_posterior(model, data, args["draws"].as<int64_t>(), args["seed"].as<uint64_t>());
  for (const auto& warning : posterior.warnings) std::cerr << "warning: " << warning << "\n";
  const auto item_model = models::make_item_response_model(model.config.simulator);
  std::optional<nlohmann::json> refinement_json;
  if (refinement) {
    auto refined = trials::refine_posterior(*item_model, data, posterior, *refinement);
    std::cerr << refined.line() << "\n";
    if (const auto warning = refined.warning()) std::cerr << "warning: " << *warning << "\n";
    if (refined.method == "mcmc")
      refined.posterior.log_prob = trials::amortized_log_prob(model, data, refined.posterior.draws);
    refinement_json = refined.to_json();
    posterior = std::move(refined.posterior);
  }
  auto summary_json = posterior.summary_json();
  if (refinement_json) summary_json["refinement"] = *refinement_json;
  if (check) {
    const auto predictive = trials::posterior_predictive_check(*item_model, data, posterior, *check);
    const auto summary_space = trials::summary_space_check(model, data, check->seed);
    std::cerr << model_check_line(predictive, summary_space) << "\n";
    for (const auto& warning : predictive.warnings()) std::cerr << "warning: " << warning << "\n";
    if (const auto warning = summary_space.warning()) std::cerr << "warning: " << *warning << "\n";
    summary_json["model_check"] = {{"items", predictive.to_json()}, {"summary_space", summary_space.to_json()}};
    if (args.count("check-out")) write_file_atomically(args["check-out"].as<std::string>(), predictive.to_csv());
  }
  const std::string summary = format == "json" ? summary_json.dump(2) + "\n" : posterior.summary_csv();
  if (args.count("draws-out")) write_file_atomically(args["draws-out"].as<std::string>(), posterior.draws_csv());
  if (args.count("out"))
    write_file_atomically(args["out"].as<std::string>(), summary);
  else
    std::cout << summary;
  return 0;
}

}  // namespace bfhpo::cli
