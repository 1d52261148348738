#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "trials/posterior_inference.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_infer(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("bfhpo infer");
  options.add_options()("data", po::value<std::string>(),
                        "responses.csv or .tsv: persons x items of 0/1 (0..K-1 graded; empty or NA missing), a header of item "
                        "names, an optional id column")(
      "draws", po::value<int64_t>()->default_value(1000), "posterior draws per item")(
      "seed", po::value<uint64_t>()->default_value(1), "seed of the draws (torch.manual_seed in Python gives the same)")(
      "format", po::value<std::string>()->default_value("csv"), "csv or json: the per-item summary")(
      "out", po::value<std::string>(), "write the summary to this file instead of stdout")(
      "draws-out", po::value<std::string>(), "also write every draw (item,draw,log_a,b,log_prob) to this CSV file")(
      "id-column", po::value<std::string>(), "the person-id column's name (default: id, person, person_id or respondent)");
  po::variables_map vm;
  const std::string usage =
      "MODEL_DIR|STUDY.json --data responses.csv [--draws N] [--seed S] [--format csv|json] [--out F] [--draws-out F]";
  if (!parse_verb_args("infer", usage, options, args, vm)) return 0;
  if (!vm.count("data")) throw UserError("bfhpo infer: missing --data. Fix: bfhpo infer " + usage);
  const std::string format = vm["format"].as<std::string>();
  if (format != "csv" && format != "json")
    throw UserError("bfhpo infer: --format '" + format + "' is unknown. Fix: use csv or json");

  auto model = trials::load_trained_model(vm["study"].as<std::string>());
  const auto data = trials::read_response_matrix(vm["data"].as<std::string>(),
                                                 vm.count("id-column") ? vm["id-column"].as<std::string>() : "",
                                                 trials::response_format(model));
  const auto posterior =
      trials::infer_posterior(model, data, vm["draws"].as<int64_t>(), vm["seed"].as<uint64_t>());
  for (const auto& warning : posterior.warnings) std::cerr << "warning: " << warning << "\n";
  const std::string summary =
      format == "json" ? posterior.summary_json().dump(2) + "\n" : posterior.summary_csv();
  if (vm.count("draws-out")) write_file_atomically(vm["draws-out"].as<std::string>(), posterior.draws_csv());
  if (vm.count("out"))
    write_file_atomically(vm["out"].as<std::string>(), summary);
  else
    std::cout << summary;
  return 0;
}

}  // namespace bfhpo::cli
