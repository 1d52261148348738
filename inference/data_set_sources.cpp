#include "inference/data_set_sources.hpp"

#include "common/user_error.hpp"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>

namespace bfhpo::inference {
namespace {

namespace fs = std::filesystem;

bool is_response_file_name(const fs::path& path) { return path.extension() == ".csv" || path.extension() == ".tsv"; }

std::vector<fs::path> folder_files(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error))
    if (is_response_file_name(entry.path()) && !fs::is_directory(entry.path())) files.push_back(entry.path());
  if (error)
    throw UserError(folder.string() + ": cannot list the folder (" + error.message() +
                    "). Fix: give a folder you can read, or the response files themselves");
  if (files.empty())
    throw UserError(folder.string() + ": a folder with no *.csv or *.tsv file. Fix: give the folder that holds the "
                    "response files, or the files themselves");
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> pattern_files(const std::string& pattern) {
  glob_t matches{};
  const int status = ::glob(pattern.c_str(), 0, nullptr, &matches);
  std::vector<fs::path> files;
  for (size_t i = 0; status == 0 && i < matches.gl_pathc; ++i)
    if (!fs::is_directory(matches.gl_pathv[i])) files.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  if (files.empty())
    throw UserError("--data " + pattern + ": the pattern matches no file. Fix: check the folder and the pattern "
                    "(e.g. 'wave*/responses.csv'), or give the files themselves");
  return files;  // glob sorts them
}

bool is_pattern(const std::string& argument) { return argument.find_first_of("*?[") != std::string::npos; }

bool is_folder(const std::string& argument) {
  struct stat status {};
  return ::stat(argument.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

// Each file's stem, or its path as given where two files share a stem.
std::vector<std::string> names_of(const std::vector<fs::path>& files) {
  std::map<std::string, int> stems;
  for (const auto& file : files) ++stems[file.stem().string()];
  std::vector<std::string> names;
  for (const auto& file : files) names.push_back(stems[file.stem().string()] > 1 ? file.string() : file.stem().string());
  return names;
}

}  // namespace

DataSetSources::DataSetSources(const std::vector<std::string>& arguments, const std::string& id_column,
                               const std::string& group_column, const ResponseFormat& format)
    : id_column_(id_column), format_(format) {
  if (arguments.empty()) throw UserError("bfhpo infer: missing --data. Fix: give a response file, a folder or a pattern");
  if (!group_column.empty()) {
    if (arguments.size() != 1 || is_folder(arguments[0]) || is_pattern(arguments[0]))
      throw UserError("bfhpo infer: --group-column " + group_column +
                      " splits one long file, and --data names several files. Fix: give one file with --group-column, "
                      "or leave --group-column out");
    groups_ = read_response_groups(arguments[0], id_column, group_column, format);
    files_.emplace_back(arguments[0]);
    if (groups_.empty())
      throw UserError(arguments[0] + ": no persons below the header. Fix: one row of responses per person");
    for (const auto& group : groups_) names_.push_back(group.name);
    return;
  }
  for (const auto& argument : arguments) {
    if (is_folder(argument)) {
      for (auto& file : folder_files(argument)) files_.push_back(std::move(file));
    } else if (is_pattern(argument) && !fs::exists(argument)) {
      for (auto& file : pattern_files(argument)) files_.push_back(std::move(file));
    } else {
      files_.emplace_back(argument);
    }
  }
  names_ = names_of(files_);
  single_file_ = arguments.size() == 1 && files_.size() == 1 && !is_folder(arguments[0]) && !is_pattern(arguments[0]);
}

DataSetRead DataSetSources::read(size_t index) {
  DataSetRead out;
  if (!groups_.empty()) {
    auto& group = groups_[index];
    out.data = std::move(group.matrix);
    out.error = group.error;
    group.matrix.reset();
    return out;
  }
  try {
    out.data = read_response_matrix(files_[index], id_column_, format_);
  } catch (const UserError& error) {
    out.error = error.what();
  }
  return out;
}

}  // namespace bfhpo::inference
