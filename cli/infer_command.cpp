#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "trials/posterior_inference.hpp"

#include <iostream>

namespace bfhpo::cli {

int run_infer(const VerbArgs& args) {
  if (!args.count("data"))
    throw UserError("bfhpo infer: missing --data. Fix: bfhpo infer " + std::string(find_verb("infer")->usage));
  const std::string format = args["format"].as<std::string>();
  if (format != "csv" && format != "json")
    throw UserError("bfhpo infer: --format '" + format + "' is unknown. Fix: use csv or json");

  auto model = trials::load_trained_model(args["study"].as<std::string>(), storage_override(args));
  const auto data = trials::read_response_matrix(args["data"].as<std::string>(),
                                                 args.count("id-column") ? args["id-column"].as<std::string>() : "",
                                                 trials::response_format(model));
  const auto posterior =
      trials::infer_posterior(model, data, args["draws"].as<int64_t>(), args["seed"].as<uint64_t>());
  for (const auto& warning : posterior.warnings) std::cerr << "warning: " << warning << "\n";
  const std::string summary =
      format == "json" ? posterior.summary_json().dump(2) + "\n" : posterior.summary_csv();
  if (args.count("draws-out")) write_file_atomically(args["draws-out"].as<std::string>(), posterior.draws_csv());
  if (args.count("out"))
    write_file_atomically(args["out"].as<std::string>(), summary);
  else
    std::cout << summary;
  return 0;
}

}  // namespace bfhpo::cli
