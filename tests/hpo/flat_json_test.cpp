#include "hpo/flat_json.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bfhpo::hpo;
using Kind = FlatJsonObject::Kind;

TEST_CASE("FlatJsonObject reads members with nlohmann's number kinds and Python's tokens") {
  FlatJsonObject object;
  REQUIRE(object.scan(R"({"z": 1, "a": [true]})"));  // read over by the next line
  const auto* o = &object;
  REQUIRE(object.scan(R"( {"a": -0, "b": 2.5e1, "c": NaN, "d": -Infinity, "e": "x\"y\\n", "f": [1, 2], "g": {"h": [null]}, "i": true} )"));
  CHECK(o->find("a")->kind == Kind::Integer);
  CHECK_FALSE(std::signbit(o->find("a")->number));  // nlohmann reads -0 as the integer 0
  CHECK(o->find("b")->kind == Kind::Float);
  CHECK(o->find("b")->number == 25.0);
  CHECK(std::isnan(o->find("c")->number));
  CHECK(o->find("d")->number == -INFINITY);
  CHECK(FlatJsonObject::decoded(*o->find("e")) == "x\"y\\n");
  CHECK(o->find("f")->kind == Kind::NumberArray);
  CHECK(o->find("f")->array_size == 2);
  CHECK(o->find("f")->number == 1.0);
  CHECK(o->find("g")->kind == Kind::Structured);
  CHECK(o->structured(*o->find("g"))["h"][0].is_null());
  CHECK(o->find("i")->boolean);
  CHECK(o->find("z") == nullptr);
}

TEST_CASE("FlatJsonObject declines what it does not read exactly like nlohmann") {
  for (const char* line : {
           R"({"a": "\u00e9"})",            // \u escape
           "{\"a\": \"caf\xc3\xa9\"}",      // non-ASCII
           R"({"a": 1, "a": 2})",           // duplicate key
           R"({"a": 1234567890123456789})",  // more than 18 digits
           R"({"a": 01})", R"({"a": 1.})", R"({"a": .5})", R"({"a": NaNx})", R"({"a": -NaN})",
           R"({"a": 1e400})", R"({"a": 1} x)", R"({"a": 1,})", R"([1])", R"({"a": [1, "x"})",
           R"({"a": {"b": 1})", R"({"a": "tab	"})"}) {
    INFO(line);
    CHECK_FALSE(FlatJsonObject().scan(line));
  }
}
