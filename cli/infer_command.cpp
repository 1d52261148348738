#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "inference/data_set_inference.hpp"
#include "inference/many_data_sets.hpp"
#include "inference/pareto_smoothed_importance.hpp"
#include "inference/shipped_estimators.hpp"
#include "inference/user_prior.hpp"
#include "memory/cpu_memory_tracking.hpp"
#include "trials/training_threads.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <map>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

namespace bfhpo::cli {
namespace {

// Whether two paths name one file: the same device and inode when both
// exist (through links and other spellings), else the same absolute,
// resolved path (a.csv, ./a.csv and $PWD/a.csv are one file not yet written).
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat first{}, second{};
  if (::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0)
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino;
  std::error_code error;
  const auto resolved_a = std::filesystem::weakly_canonical(std::filesystem::absolute(a), error);
  const auto resolved_b = std::filesystem::weakly_canonical(std::filesystem::absolute(b), error);
  return !error && resolved_a == resolved_b;
}

constexpr const char* kOutputOptions[] = {"out", "draws-out", "check-out", "persons-out", "datasets-out"};

// An output that names an input, or another output, would destroy it: refused before any work.
void refuse_outputs_over_inputs(const VerbArgs& args, const std::vector<std::filesystem::path>& inputs) {
  std::vector<std::string> outputs;
  for (const char* option : kOutputOptions)
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
std::optional<inference::PredictiveCheckOptions> check_options(const VerbArgs& args, int64_t n_categories) {
  const auto statistics = static_cast<int64_t>(inference::item_statistic_names(n_categories).size());
  const auto replications = args["check-replications"].defaulted()
                                ? inference::default_replications(statistics, args["check-alpha"].as<double>())
                                : args["check-replications"].as<int64_t>();
  if (replications == 0) {
    if (args.count("check-out"))
      throw UserError("bfhpo infer: --check-out with --check-replications 0: no model check to write. Fix: leave "
                      "out one of them");
    return std::nullopt;
  }
  inference::PredictiveCheckOptions options{replications, args["check-alpha"].as<double>(), args["seed"].as<uint64_t>()};
  inference::check_options_valid(options, statistics,
                              "bfhpo infer: --check-replications " + std::to_string(replications) +
                                  " --check-alpha " + std::to_string(options.alpha));
  return options;
}

// The refinement's options; none with --refine off.
std::optional<inference::RefinementOptions> refinement_options(const VerbArgs& args) {
  const auto method = args["refine"].as<std::string>();
  if (method == "off") return std::nullopt;
  // The default importance step needs draws enough for k-hat; with fewer the draws stay amortized.
  if (args["refine"].defaulted() && args["draws"].as<int64_t>() < inference::kFewestSmoothedDraws) return std::nullopt;
  inference::RefinementOptions options;
  options.method = method;
  options.chains = args["refine-chains"].as<int64_t>();
  options.warmup_sweeps = args["refine-warmup"].as<int64_t>();
  options.sampling_sweeps = args["refine-sweeps"].as<int64_t>();
  options.until_converged = !args.count("refine-all-sweeps");
  options.seed = args["seed"].as<uint64_t>();
  inference::check_refinement_options(options, args["draws"].as<int64_t>(), "bfhpo infer: --refine " + method);
  return options;
}

// The reported posterior's prior when --prior gives one; it needs the exact-posterior step.
std::optional<models::ItemPriors> prior_option(const VerbArgs& args, const inference::TrainedModel& model,
                                               const std::optional<inference::RefinementOptions>& refinement) {
  if (!args.count("prior")) return std::nullopt;
  const auto priors = inference::user_priors(args["prior"].as<std::vector<std::string>>(), model.config.simulator);
  if (!refinement)
    throw UserError("bfhpo infer: --prior with --refine off (or fewer than " +
                    std::to_string(inference::kFewestSmoothedDraws) +
                    " --draws): the amortized draws have the training prior (" +
                    inference::prior_text(model.config.simulator) +
                    "), and only the exact-posterior step gives another. Fix: --refine importance or auto");
  return priors;
}

// Person scores when --persons-out asks for them.
std::optional<inference::PersonScoreOptions> person_options(const VerbArgs& args) {
  const auto plausible_values = args["plausible-values"].as<int64_t>();
  if (!args.count("persons-out")) {
    if (plausible_values != 0)
      throw UserError("bfhpo infer: --plausible-values without --persons-out: nowhere to write them. Fix: add "
                      "--persons-out FILE");
    return std::nullopt;
  }
  if (plausible_values < 0 || plausible_values > 1000)
    throw UserError("bfhpo infer: --plausible-values " + std::to_string(plausible_values) +
                    ": give 0 to 1000 draws a person (5 to 20 is usual)");
  inference::PersonScoreOptions options;
  options.plausible_values = plausible_values;
  options.seed = args["seed"].as<uint64_t>();
  return options;
}

// MODEL_DIR|STUDY.json, or with --model the shipped estimator whose ranges hold the (first) data set.
std::filesystem::path estimator_path(const VerbArgs& args, const std::string& id_column, const std::string& group_column) {
  if (!args.count("model")) return args["study"].as<std::string>();
  if (args.count("study"))
    throw UserError("bfhpo infer: both " + args["study"].as<std::string>() + " and --model " +
                    args["model"].as<std::string>() + ". Fix: give one estimator: a MODEL_DIR (or study), or --model");
  const auto estimators = inference::shipped_estimators();
  // Read with room for any shipped estimator's categories and missing cells, to learn the data's shape.
  int64_t categories = 2;
  for (const auto& estimator : estimators) categories = std::max(categories, estimator.simulator.n_categories);
  inference::DataSetSources sources(args["data"].as<std::vector<std::string>>(), id_column, group_column,
                                    inference::ResponseFormat(categories, true));
  const auto read = sources.read(0);
  if (!read.data) throw UserError(read.error);
  const auto& chosen =
      inference::choose_estimator(estimators, args["model"].as<std::string>(), inference::DataShape::of(*read.data));
  std::cerr << "estimator: the shipped " << chosen.name << " (" << chosen.folder.string() << "; trained on "
            << inference::ranges_text(chosen.simulator) << ", priors " << inference::prior_text(chosen.simulator)
            << ")\n";
  return chosen.folder;
}

// The live count of data sets done, with the time left: redrawn in place on a terminal, else a line a tenth.
class DataSetProgress {
 public:
  explicit DataSetProgress(size_t total) : total_(total), live_(::isatty(STDERR_FILENO) == 1) {}
  void done(size_t count) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const bool tenth = count * 10 / total_ != (count - 1) * 10 / total_;
    if (!live_ && !tenth) return;
    std::ostringstream line;
    line << std::fixed << std::setprecision(1) << "infer: " << count << " of " << total_ << " data sets, " << elapsed
         << " s";
    if (count < total_) line << ", about " << elapsed / static_cast<double>(count) * static_cast<double>(total_ - count) << " s left";
    std::cerr << (live_ ? "\r" : "") << line.str() << (live_ && count < total_ ? "" : "\n") << std::flush;
  }

 private:
  size_t total_;
  bool live_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One response file, as infer has always answered it: the per-item summary, and its draws, check and persons.
int infer_one_file(const VerbArgs& args, inference::TrainedModel& model, inference::DataSetSources& sources,
                   const inference::InferenceOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto read = sources.read(0);
  if (!read.data) throw UserError(read.error);
  const auto result =
      inference::infer_data_set(model, *read.data, options, [](const std::string& line) { std::cerr << line << "\n"; });
  const auto& posterior = result.posterior;
  if (result.predictive && args.count("check-out"))
    write_file_atomically(args["check-out"].as<std::string>(), result.predictive->to_csv());
  if (result.persons) write_file_atomically(args["persons-out"].as<std::string>(), result.persons->to_csv());
  if (args.count("datasets-out")) {
    const auto row = inference::DataSetRow::of(
        sources.name(0), *read.data, result,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), result.posterior.warnings);
    write_file_atomically(args["datasets-out"].as<std::string>(),
                          args["format"].as<std::string>() == "json"
                              ? nlohmann::json::array({row.to_json()}).dump(2) + "\n"
                              : inference::data_set_table_header() + inference::data_set_table_line(row));
  }
  const std::string summary =
      args["format"].as<std::string>() == "json" ? result.summary_json().dump(2) + "\n" : posterior.summary_csv();
  if (args.count("draws-out")) write_file_atomically(args["draws-out"].as<std::string>(), posterior.draws_csv());
  if (args.count("out"))
    write_file_atomically(args["out"].as<std::string>(), summary);
  else
    std::cout << summary;
  return 0;
}

// The outputs of a many-data-set run, each written whole at the end (or not at all), the summary to stdout without --out.
class ManyOutputs {
 public:
  ManyOutputs(const VerbArgs& args) : json_(args["format"].as<std::string>() == "json") {
    for (const char* option : kOutputOptions)
      if (args.count(option)) writers_.emplace(option, std::make_unique<AtomicFileWriter>(args[option].as<std::string>()));
  }
  void add(const std::string& dataset, const inference::DataSetOutcome& outcome, bool first) {
    if (outcome.result) {
      const auto& result = *outcome.result;
      const bool first_summary = summaries_++ == 0;
      write("out", json_ ? std::string(first_summary ? "[\n" : ",\n") + data_set_json(dataset, result).dump(2)
                         : inference::with_dataset_column(result.posterior.summary_csv(), dataset, first_summary));
      if (has("draws-out"))
        write("draws-out", inference::with_dataset_column(result.posterior.draws_csv(), dataset, first_summary));
      if (has("check-out") && result.predictive)
        write("check-out", inference::with_dataset_column(result.predictive->to_csv(), dataset, first_summary));
      if (has("persons-out") && result.persons)
        write("persons-out", inference::with_dataset_column(result.persons->to_csv(), dataset, first_summary));
    }
    if (has("datasets-out"))
      write("datasets-out", json_ ? std::string(first ? "[\n" : ",\n") + outcome.row.to_json().dump(2)
                                  : (first ? inference::data_set_table_header() : "") +
                                        inference::data_set_table_line(outcome.row));
  }
  void commit() {
    if (json_) {
      write("out", summaries_ == 0 ? "[]\n" : "\n]\n");
      if (has("datasets-out")) write("datasets-out", "\n]\n");
    }
    for (auto& [option, writer] : writers_) writer->commit();
  }

 private:
  static nlohmann::json data_set_json(const std::string& dataset, const inference::DataSetInference& result) {
    nlohmann::json out = {{"dataset", dataset}};
    out.update(result.summary_json());
    return out;
  }
  bool has(const std::string& option) const { return writers_.count(option) > 0; }
  void write(const std::string& option, const std::string& bytes) {
    if (has(option))
      writers_.at(option)->append(bytes);
    else if (option == "out")
      std::cout << bytes;
  }

  bool json_;
  size_t summaries_ = 0;
  std::map<std::string, std::unique_ptr<AtomicFileWriter>> writers_;
};

// Many data sets through the model loaded once: progress, outputs, closing lines; exit 2 naming the failed ones.
int infer_many_data_sets(const VerbArgs& args, inference::TrainedModel& model, inference::DataSetSources& sources,
                         const inference::InferenceOptions& options) {
  ManyOutputs outputs(args);
  DataSetProgress progress(sources.size());
  std::vector<inference::DataSetRow> rows;
  std::vector<std::string> failed;
  inference::infer_many(model, sources, options, [&](size_t index, const inference::DataSetOutcome& outcome) {
    outputs.add(sources.name(index), outcome, index == 0);
    if (!outcome.row.error.empty()) {
      failed.push_back(sources.name(index));
      std::cerr << "\n" << sources.name(index) << ": " << outcome.row.error << "\n";
    }
    rows.push_back(outcome.row);
    progress.done(index + 1);
  });
  outputs.commit();
  for (const auto& line : inference::closing_lines(rows)) std::cerr << line << "\n";
  if (failed.empty()) return 0;
  std::string names;
  for (size_t i = 0; i < failed.size() && i < 10; ++i) names += (i ? ", " : "") + failed[i];
  if (failed.size() > 10) names += ", ...";
  throw UserError("bfhpo infer: " + std::to_string(failed.size()) + " of " + std::to_string(sources.size()) +
                  " data sets failed (" + names + "); the others' results are written. Fix: see each one's error " +
                  "above (and in --datasets-out)");
}

}  // namespace

int run_infer(const VerbArgs& args) {
  if (!args.count("data"))
    throw UserError("bfhpo infer: missing --data. Fix: bfhpo infer " + std::string(find_verb("infer")->usage));
  const std::string format = args["format"].as<std::string>();
  if (format != "csv" && format != "json")
    throw UserError("bfhpo infer: --format '" + format + "' is unknown. Fix: use csv or json");

  // One thread (OMP_NUM_THREADS when set), as training on a CPU: the model check and the items judged alone
  // spread their own work over the cores, and a BLAS pool spinning against a busy machine's other processes
  // made one 445 x 24 file take 190 s of wall time for 17 s of CPU.
  trials::set_kernel_threads(trials::training_threads(trials::TrainingOptions{}, torch::kCPU));
  // Freed large blocks kept for the next data set's tables, as training keeps them for the next step: a fresh
  // mapping of a data set's 48 MB ability table faulted in page by page cost 5 s of system time in 200 data sets.
  memory::install_cpu_memory_tracking();
  const auto text_of = [&](const char* option) { return args.count(option) ? args[option].as<std::string>() : ""; };
  const std::string spread = args["spread-calibration"].as<std::string>();
  if (spread != "on" && spread != "off")
    throw UserError("bfhpo infer: --spread-calibration '" + spread + "' is unknown. Fix: use on or off");
  auto model = inference::load_trained_model(estimator_path(args, text_of("id-column"), text_of("group-column")),
                                             storage_override(args));
  if (spread == "off") model.spread = inference::PosteriorSpread{};
  inference::DataSetSources sources(args["data"].as<std::vector<std::string>>(), text_of("id-column"),
                                    text_of("group-column"), inference::response_format(model));
  std::vector<std::filesystem::path> inputs = model.files;
  inputs.insert(inputs.end(), sources.files().begin(), sources.files().end());
  refuse_outputs_over_inputs(args, inputs);
  inference::InferenceOptions options;
  options.draws = args["draws"].as<int64_t>();
  options.seed = args["seed"].as<uint64_t>();
  options.check = check_options(args, inference::response_format(model).n_categories);
  options.refinement = refinement_options(args);
  options.prior = prior_option(args, model, options.refinement);
  options.persons = person_options(args);
  if (sources.single_file()) return infer_one_file(args, model, sources, options);
  return infer_many_data_sets(args, model, sources, options);
}

}  // namespace bfhpo::cli
