#include "trials/weights_folder.hpp"

#include "common/config_reader.hpp"
#include "hpo/storage/postgres_url.hpp"

namespace bfhpo::trials {

std::filesystem::path weights_folder(const hpo::StudySpec& spec) {
  ConfigSection top(spec.document, spec.source.string(), "");
  std::filesystem::path folder;
  if (const auto chosen = top.string("weights_dir")) {
    const std::filesystem::path path = *chosen;
    folder = path.is_absolute() ? path : spec.source.parent_path() / path;
    std::error_code ignored;
    if (std::filesystem::exists(folder, ignored) && !std::filesystem::is_directory(folder, ignored))
      throw top.error("weights_dir", "names " + folder.string() + ", which is not a folder",
                      "name a folder (it is created when missing), e.g. \"weights_dir\": \"" +
                          spec.source.filename().string() + ".weights\"");
  } else if (hpo::is_postgres_url(spec.storage.string())) {
    folder = spec.source.string() + ".weights";
  } else {
    folder = spec.storage.string() + ".weights";
  }
  return std::filesystem::absolute(folder);
}

}  // namespace bfhpo::trials
