// PostgreSQL storage in Optuna's RDB schema, opened from a
// `postgresql://user:pass@host:port/db` URL (issue 12 part 3). Built only
// where libpq is found (BFHPO_WITH_POSTGRES); open_storage says so otherwise.
#pragma once

#include "hpo/storage/storage.hpp"

#include <memory>
#include <string>

namespace bfhpo::hpo {

std::unique_ptr<Storage> open_postgres_storage(const std::string& url, StorageAccess access);

}  // namespace bfhpo::hpo
