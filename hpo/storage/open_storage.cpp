#include "hpo/storage/open_storage.hpp"

#include "common/user_error.hpp"
#include "hpo/storage/journal_storage.hpp"
#include "hpo/storage/postgres_storage.hpp"
#include "hpo/storage/postgres_url.hpp"

namespace bfhpo::hpo {

std::unique_ptr<Storage> open_storage(const std::string& storage, StorageAccess access) {
  if (is_postgres_url(storage)) {
#ifdef BFHPO_WITH_POSTGRES
    return open_postgres_storage(storage, access);
#else
    throw UserError::at(redacted_postgres_url(storage), "storage",
                        "this bfhpo was built without PostgreSQL storage (libpq was not found)",
                        "install libpq-dev (scripts/setup) and rebuild, or use a journal file path");
#endif
  }
  return std::make_unique<JournalStorage>(storage, access);
}

}  // namespace bfhpo::hpo
