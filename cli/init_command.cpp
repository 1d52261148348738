#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "models/simulators/simulator_spec.hpp"
#include "inference/study_from_data.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace bfhpo::cli {
namespace {

namespace fs = std::filesystem;

// -o names a new file, or with --force a regular file that is not the data.
void check_output(const fs::path& out, const fs::path& data, bool force) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(out, error);
  if (!fs::exists(status)) return;
  if (fs::equivalent(out, data, error))
    throw UserError("bfhpo init: -o " + out.string() + " is the data file. Fix: give the study another name, e.g. -o " +
                    data.stem().string() + "-study.json");
  if (!fs::is_regular_file(status))
    throw UserError("bfhpo init: -o " + out.string() + " exists and is not a regular file (" +
                    (fs::is_symlink(status) ? "a symbolic link" : fs::is_directory(status) ? "a folder" : "a device or pipe") +
                    "). Fix: give the path of a new file");
  if (!force)
    throw UserError("bfhpo init: -o " + out.string() + " exists. Fix: give another path, or --force to replace it");
}

}  // namespace

int run_init(const VerbArgs& args) {
  const fs::path data_file = args["data"].as<std::string>();
  const std::string model = args["model"].as<std::string>();
  const auto& models = models::model_names();
  if (std::find(models.begin(), models.end(), model) == models.end())
    throw UserError("bfhpo init: --model '" + model + "' is unknown. Fix: use rasch, 2pl, 3pl or grm");
  const std::optional<fs::path> out =
      args.count("output") ? std::optional<fs::path>(args["output"].as<std::string>()) : std::nullopt;
  if (out && out->empty())
    throw UserError("bfhpo init: -o is empty. Fix: give the path of a new study file, e.g. -o " +
                    data_file.stem().string() + "-study.json, or leave -o out for the study on stdout");
  if (out) check_output(*out, data_file, args.count("force") > 0);

  const auto data = inference::read_response_matrix(
      data_file, args.count("id-column") ? args["id-column"].as<std::string>() : "", inference::init_response_format(model));
  const auto summary = inference::summarize_responses(data);
  const auto estimates = inference::estimate_log_a(data, summary, model, data_file,
                                                   [](const std::string& line) { std::cerr << line << std::endl; });
  const auto estimators = args.count("fine-tune") ? inference::shipped_estimators() : std::vector<inference::ShippedEstimator>{};
  const inference::ShippedEstimator* fine_tune = nullptr;
  // After estimate_log_a's checks: the file's categories run 0..K-1 without a gap.
  if (args.count("fine-tune")) fine_tune = &inference::nearest_estimator(estimators, model, inference::DataShape::of(data));
  auto draft = inference::draft_study(summary, model, data_file, estimates, fine_tune);
  if (const auto journal = out ? inference::fresh_journal(*out) : std::nullopt) {
    draft.study["storage"] = *journal;
    draft.choices.push_back({"storage " + *journal, out->string() + ".journal holds an earlier study's trials (left as "
                                                    "it is); this study starts a journal of its own"});
  }
  const std::string text = draft.study.dump(2) + "\n";
  std::ostream& said = out ? std::cout : std::cerr;
  for (const auto& choice : draft.choices) said << choice.what << ": " << choice.why << "\n";
  if (!out) {
    std::cout << text;
    return 0;
  }
  write_file_atomically(*out, text);
  said << "wrote " << out->string() << "; next: bfhpo train " << out->string() << ", then bfhpo infer "
       << out->string() << ".train --data " << data_file.string()
        << " (add --refine auto for the exact posterior, as Stan's, where the amortized one is off)\n";
  return 0;
}

}  // namespace bfhpo::cli
