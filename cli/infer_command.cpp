#include "cli/command.hpp"
#include "common/atomic_file.hpp"
#include "common/user_error.hpp"
#include "trials/posterior_inference.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <iostream>
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
  for (const char* option : {"out", "draws-out"})
    if (args.count(option)) outputs.push_back(option);
  for (const auto& option : outputs) {
    const std::string output = args[option].as<std::string>();
    for (const auto& input : inputs)
      if (same_file(output, input))
        throw UserError("bfhpo infer: --" + option + " " + output + " names an input, " + input.string() +
                        ", which writing would destroy. Fix: give --" + option + " another file");
  }
  if (outputs.size() == 2 && same_file(args["out"].as<std::string>(), args["draws-out"].as<std::string>()))
    throw UserError("bfhpo infer: --out and --draws-out name the same file, " + args["out"].as<std::string>() +
                    ". Fix: give the summary and the draws a file each");
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
