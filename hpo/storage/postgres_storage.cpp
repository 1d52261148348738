#include "hpo/storage/postgres_storage.hpp"

#include "common/user_error.hpp"
#include "hpo/storage/postgres_url.hpp"

namespace bfhpo::hpo {

// The hook the PostgreSQL storage fills (issue 12 part 3); until then a clear
// refusal, nothing written.
std::unique_ptr<Storage> open_postgres_storage(const std::string& url, StorageAccess) {
  throw UserError::at(redacted_postgres_url(url), "storage", "the PostgreSQL storage is not implemented yet",
                      "use a journal file path as \"storage\"");
}

}  // namespace bfhpo::hpo
