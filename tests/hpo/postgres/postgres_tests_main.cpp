// Catch2's main for the PostgreSQL tests: exit 77 (ctest's Skipped) when no
// test server is given, except when Catch only lists the tests.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>

int main(int argc, char* argv[]) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing = listing || std::strncmp(argv[i], "--list", 6) == 0;
  const char* url = std::getenv("BFHPO_TEST_POSTGRES_URL");
  if (!listing && (!url || !*url)) {
    std::cout << "Skipped: BFHPO_TEST_POSTGRES_URL is not set; run the tests under "
                 "`bash scripts/with-postgres ctest ...` (scripts/test does)\n";
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
