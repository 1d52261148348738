// The data sets of one `bfhpo infer` call, named and read one at a time, so
// a run over thousands of files holds one in memory: response files given
// one by one, every *.csv and *.tsv of a folder (in name order), a glob
// pattern (quoted, so bfhpo expands it), or one long file split by a group
// column (read_response_groups: the groups in the order they first appear).
// A data set's name is its file's stem (the path as given where two files
// share a stem) or its group's value.
//
// A folder or a pattern that holds no response file, a missing group
// column, and a group file given with other files are UserErrors (nothing
// has run). A data set that cannot be read is not: read() returns its error,
// and the caller goes on with the others.
#pragma once

#include "inference/response_matrix.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bfhpo::inference {

struct DataSetRead {
  std::optional<ResponseMatrix> data;  // none when it could not be read
  std::string error;                   // why, naming the file (and line and column where it can)
};

class DataSetSources {
 public:
  // `group_column` empty: every argument a file, folder or pattern.
  DataSetSources(const std::vector<std::string>& arguments, const std::string& id_column,
                 const std::string& group_column, const ResponseFormat& format);

  size_t size() const { return names_.size(); }
  const std::string& name(size_t index) const { return names_[index]; }
  // The index-th data set; a group's matrix is handed over (read it once).
  DataSetRead read(size_t index);
  // Every file the data sets are read from (for outputs that must not replace them).
  const std::vector<std::filesystem::path>& files() const { return files_; }
  // Whether the call named exactly one response file and no group column: infer's single-file outputs.
  bool single_file() const { return single_file_; }

 private:
  std::vector<std::string> names_;
  std::vector<std::filesystem::path> files_;  // the long file once for groups
  std::vector<ResponseGroup> groups_;
  std::string id_column_;
  ResponseFormat format_;
  bool single_file_ = false;
};

}  // namespace bfhpo::inference
