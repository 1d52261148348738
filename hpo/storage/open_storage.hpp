// Opens the storage a study's "storage" names: a postgresql:// URL
// (postgres_url.hpp) opens PostgreSQL in Optuna's RDB schema
// (postgres_storage.hpp), anything else is a journal file path.
#pragma once

#include "hpo/storage/storage.hpp"

#include <memory>
#include <string>

namespace bfhpo::hpo {

// UserError naming the location when it cannot be opened; a ReadOnly open of
// a journal that does not exist is one.
std::unique_ptr<Storage> open_storage(const std::string& storage, StorageAccess access);

}  // namespace bfhpo::hpo
