#include "models/approximator_weights.hpp"

#include "common/user_error.hpp"

#include <map>
#include <optional>
#include <vector>

namespace bfhpo::models {
namespace {

// The first line of an exception's message: LibTorch's without its C++ backtrace.
std::string first_line(const std::exception& error) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&error);
  const std::string message = torch_error ? torch_error->what_without_backtrace() : error.what();
  return message.substr(0, message.find('\n'));
}

std::string shape_text(const torch::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// Every parameter and buffer of `module`, by name.
torch::OrderedDict<std::string, torch::Tensor> named_tensors(const torch::nn::Module& module) {
  auto tensors = module.named_parameters();
  for (const auto& buffer : module.named_buffers()) tensors.insert(buffer.key(), buffer.value());
  return tensors;
}

// The first numbered module the archive holds past the end of a numbered
// family of `module`'s (children "0".."n-1", "coupling0".."coupling<n-1>",
// "subnet1", "subnet2": the next after the highest number):
// weights of a deeper network than the configuration builds, whose extra
// layers LibTorch's load would ignore. Its dotted name; none when none.
std::optional<std::string> module_beyond_configuration(const torch::nn::Module& module,
                                                       torch::serialize::InputArchive& archive,
                                                       const std::string& prefix) {
  std::map<std::string, int64_t> family_ends;  // name without its trailing digits -> highest number + 1
  for (const auto& child : module.named_children()) {
    const std::string& name = child.key();
    const size_t digits = name.find_last_not_of("0123456789") + 1;
    if (digits < name.size() && name.size() - digits < 10) {
      int64_t& end = family_ends[name.substr(0, digits)];
      end = std::max<int64_t>(end, std::stoll(name.substr(digits)) + 1);
    }
    torch::serialize::InputArchive child_archive;
    if (archive.try_read(name, child_archive))
      if (auto beyond = module_beyond_configuration(*child.value(), child_archive, prefix + name + "."))
        return beyond;
  }
  for (const auto& [family, end] : family_ends) {
    torch::serialize::InputArchive next;
    if (archive.try_read(family + std::to_string(end), next)) return prefix + family + std::to_string(end);
  }
  return std::nullopt;
}

}  // namespace

void load_checked_weights(ContinuousApproximatorImpl& approximator, const std::filesystem::path& weights,
                          const std::string& config_source) {
  std::vector<std::vector<int64_t>> configured_sizes;
  for (const auto& tensor : named_tensors(approximator)) configured_sizes.push_back(tensor->sizes().vec());
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(weights.string(), torch::kCPU);
  } catch (const std::exception& error) {  // c10::Error from the zip reader; TorchScript's own from a damaged archive
    throw UserError(weights.string() + ": not weights LibTorch can read (" + first_line(error) +
                    "): the file is empty, cut short or corrupt. Fix: train again (`bfhpo train`, or `bfhpo "
                    "optimize` for a study's trial), or copy the weights.pt again from where they were trained");
  }
  const std::string mismatch =
      weights.string() + ": these weights do not belong to the configuration in " + config_source;
  const std::string fix = ". Fix: restore the configuration the weights were trained with, or train again";
  try {
    approximator.load(archive);
  } catch (const std::exception& error) {
    throw UserError(mismatch + " (" + first_line(error) + ")" + fix);
  }
  if (const auto beyond = module_beyond_configuration(approximator, archive, ""))
    throw UserError(mismatch + ": the weights hold '" + *beyond + "', a layer the configuration does not build" + fix);
  const auto loaded = named_tensors(approximator);
  for (size_t i = 0; i < loaded.size(); ++i)
    if (loaded[i].value().sizes() != torch::IntArrayRef(configured_sizes[i]))
      throw UserError(mismatch + ": '" + loaded[i].key() + "' is " + shape_text(loaded[i].value().sizes()) +
                      " in the weights, " + shape_text(configured_sizes[i]) + " in the configuration" + fix);
}

}  // namespace bfhpo::models
