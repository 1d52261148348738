#include "common/config_reader.hpp"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

using bfhpo::ConfigProblem;
using bfhpo::ConfigSection;
using bfhpo::UserError;
using bfhpo::parse_config_text;
using Catch::Contains;
using nlohmann::json;

namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("bfhpo_config_reader_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST_CASE("a key given twice is refused with its field path", "[config]") {
  CHECK_THROWS_WITH(parse_config_text(R"({"n_trials": 3, "n_trials": 4})", "s.json"),
                    Contains("s.json") && Contains("'n_trials'") && Contains("given twice"));
  CHECK_THROWS_WITH(parse_config_text(R"({"training": {"epochs": 1, "batch_size": 2, "epochs": 3}})", "s.json"),
                    Contains("'training.epochs'"));
  CHECK_THROWS_WITH(parse_config_text(R"({"a": [{"x": 1}, {"y": 1, "y": 2}]})", "s.json"), Contains("'a[1].y'"));
  // The same key in different objects is fine.
  CHECK(parse_config_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]})", "s.json")["c"][1]["x"] == 4);
}

TEST_CASE("nesting is refused beyond the limit, cleanly at any depth", "[config]") {
  for (const int depth : {bfhpo::kMaxConfigDepth + 1, 1000, 100000}) {
    const std::string text = std::string(depth, '[') + std::string(depth, ']');
    CHECK_THROWS_WITH(parse_config_text(text, "deep.json"), Contains("deep.json") && Contains("nested deeper"));
  }
  const int ok = bfhpo::kMaxConfigDepth;
  CHECK_NOTHROW(parse_config_text(std::string(ok, '[') + std::string(ok, ']'), "s.json"));
}

TEST_CASE("numbers beyond the doubles and bad syntax are UserErrors", "[config]") {
  CHECK_THROWS_WITH(parse_config_text(R"({"n_trials": 1e400})", "s.json"), Contains("'n_trials'") && Contains("1e400"));
  CHECK_THROWS_WITH(parse_config_text(R"({"s": {"high": -1e999}})", "s.json"), Contains("'s.high'"));
  CHECK_THROWS_WITH(parse_config_text(R"({"name": )", "s.json"), Contains("not valid JSON"));
  CHECK_THROWS_WITH(parse_config_text("", "s.json"), Contains("not valid JSON"));
}

TEST_CASE("read_config_file names a directory, a missing file and the system's reason", "[config]") {
  const auto dir = scratch("a_directory.json");
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(bfhpo::read_config_file(dir, "study file"), Contains("is a directory"));
  CHECK_THROWS_WITH(bfhpo::read_config_file(scratch("missing.json"), "study file"),
                    Contains("No such file or directory") && Contains("check the path"));
  const auto file = scratch("plain.json");
  std::ofstream(file) << R"({"name": "x"})";
  CHECK_THROWS_WITH(bfhpo::read_config_file(file / "below", "study file"), Contains("Not a directory"));
  CHECK(bfhpo::read_config_file(file, "study file")["name"] == "x");
  if (::geteuid() != 0) {  // root reads any file
    std::filesystem::permissions(file, std::filesystem::perms::none);
    CHECK_THROWS_WITH(bfhpo::read_config_file(file, "study file"), Contains("Permission denied"));
  }
  std::filesystem::remove_all(file.parent_path());
}

TEST_CASE("an unknown key names the closest known key with the section's path", "[config]") {
  const json document = json::parse(R"({"memory": {"budget_mb": 64, "oom_retry": {"min_batch_siz": 2}}})");
  ConfigSection top(document, "s.json", "");
  auto memory = top.section("memory");
  memory->number("budget_mb");
  auto retry = memory->section("oom_retry");
  retry->integer("min_batch_size", 1);
  retry->integer("backoff_factor", 1);
  CHECK_THROWS_WITH(retry->reject_unknown_keys(),
                    Contains("'memory.oom_retry.min_batch_siz'") && Contains("did you mean 'memory.oom_retry.min_batch_size'"));
  // Declared keys, read or merely allowed, are known.
  const json top_level = json::parse(R"({"name": "s", "simulator": {}})");
  ConfigSection study(top_level, "s.json", "");
  study.string("name");
  CHECK_THROWS_WITH(study.reject_unknown_keys(), Contains("'simulator'") && Contains("did you mean 'name'"));
  study.allow({"simulator"});
  CHECK_NOTHROW(study.reject_unknown_keys());
}

TEST_CASE("integers: exact within the range, refused outside it, never truncated", "[config]") {
  const auto read = [](const json& value, int64_t minimum, int64_t maximum) {
    return bfhpo::config_integer(value, "s.json", "n", minimum, maximum);
  };
  constexpr int64_t kInt = std::numeric_limits<int>::max();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> any(-(int64_t{1} << 62), int64_t{1} << 62);
  for (int i = 0; i < 2000; ++i) {
    const int64_t low = any(rng), high = any(rng);
    const int64_t minimum = std::min(low, high), maximum = std::max(low, high);
    const int64_t x = any(rng);
    const bool inside = x >= minimum && x <= maximum;
    if (inside) CHECK(read(json(x), minimum, maximum) == x);
    else CHECK_THROWS_AS(read(json(x), minimum, maximum), UserError);
  }
  // The issue's cases: each was read modulo 2^32 by get<int>().
  for (const char* text : {"3000000000", "4294967297", "5000000001", "4294967296", "3e9", "18446744073709551615",
                           "9.3e18", "-9.3e18"})
    CHECK_THROWS_WITH(read(json::parse(text), 1, kInt), Contains("[1, 2147483647]"));
  CHECK(read(json::parse("2147483647"), 1, kInt) == kInt);
  CHECK(read(json::parse("1e3"), 1, kInt) == 1000);  // a whole float is that integer
  CHECK_THROWS_WITH(read(json::parse("2.5"), 1, kInt), Contains("whole number"));
  CHECK_THROWS_WITH(read(json::parse("\"5\""), 1, kInt), Contains("expected an integer, got a string"));
  CHECK_THROWS_WITH(read(json::parse("true"), 1, kInt), Contains("got a boolean"));
  CHECK_THROWS_WITH(read(json::parse("null"), 1, kInt), Contains("got null"));
}

TEST_CASE("numbers, booleans, strings and choices name the expected type", "[config]") {
  const json document = json::parse(R"({"x": "0.5", "b": "true", "s": "", "c": "medain", "o": [1]})");
  ConfigSection s(document, "s.json", "pruner");
  CHECK_THROWS_WITH(s.number("x"), Contains("'pruner.x'") && Contains("expected a number, got a string"));
  CHECK_THROWS_WITH(s.boolean("b"), Contains("expected true or false, got a string"));
  CHECK_THROWS_WITH(s.string("s"), Contains("non-empty string"));
  CHECK_THROWS_WITH(s.choice("c", {"none", "median"}), Contains("did you mean \"median\""));
  CHECK_THROWS_WITH(s.section("o"), Contains("'pruner.o'") && Contains("expected an object"));
  CHECK_FALSE(s.number("absent").has_value());
}

TEST_CASE("check turns an options struct's problem into a UserError at the section", "[config]") {
  const json document = json::object();
  ConfigSection s(document, "s.json", "memory.oom_retry");
  CHECK_NOTHROW(s.check(std::nullopt));
  CHECK_THROWS_WITH(s.check(ConfigProblem{"min_batch_size", "must be at least 1", "give 4"}),
                    Contains("s.json: field 'memory.oom_retry.min_batch_size': must be at least 1. Fix: give 4"));
}

TEST_CASE("closest_name picks the smallest edit distance", "[config]") {
  CHECK(bfhpo::closest_name("n_trails", {"name", "n_trials", "seed"}) == "n_trials");
  CHECK(bfhpo::closest_name("memroy", {"memory", "name", "training"}) == "memory");
  CHECK(bfhpo::closest_name("simulater", {"simulator", "sampler"}) == "simulator");
}
