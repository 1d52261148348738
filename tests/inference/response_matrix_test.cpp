#include <catch2/catch.hpp>

#include "common/user_error.hpp"
#include "inference/response_matrix.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace bfhpo;
using bfhpo::inference::read_response_matrix;
using bfhpo::inference::ResponseFormat;

namespace {

// This process's folder for the files the tests write, removed when the process ends.
struct DataFolder {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("bfhpo_response_matrix_" + std::to_string(::getpid()));
  DataFolder() { std::filesystem::create_directories(dir); }
  ~DataFolder() { std::filesystem::remove_all(dir); }
};

std::filesystem::path write_data(const std::string& name, const std::string& text) {
  static const DataFolder folder;
  const auto path = folder.dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The UserError's message, or "" when reading succeeds.
std::string read_error(const std::filesystem::path& path, const ResponseFormat& format) {
  try {
    read_response_matrix(path, "", format);
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("read_response_matrix: graded categories and missing cells are read into responses and a mask",
          "[response_matrix]") {
  const auto path = write_data("graded.csv", "id,q1,q2,q3\np1,0,3,NA\np2,2,,1\np3,na,1,\"2\"\n");
  const auto matrix = read_response_matrix(path, "", ResponseFormat{4, true});
  // Parenthesized: libtorch 2.x's c10 logging defines a CHECK macro of its own, which splits a braced list.
  CHECK((matrix.item_names == std::vector<std::string>{"q1", "q2", "q3"}));
  CHECK((matrix.person_ids == std::vector<std::string>{"p1", "p2", "p3"}));
  CHECK(torch::equal(matrix.responses, torch::tensor({0.f, 3.f, 0.f, 2.f, 0.f, 1.f, 0.f, 1.f, 2.f}).reshape({3, 3})));
  CHECK(torch::equal(matrix.mask, torch::tensor({1.f, 1.f, 0.f, 1.f, 0.f, 1.f, 0.f, 1.f, 1.f}).reshape({3, 3})));
  // A binary model's complete file: every cell observed.
  const auto binary = read_response_matrix(write_data("binary.csv", "a,b\n0,1\n1,1\n"));
  CHECK(binary.mask.min().item<float>() == 1.0f);
  CHECK(binary.responses.sum().item<float>() == 3.0f);
}

TEST_CASE("read_response_matrix: a value outside the model's categories names the cell and the range",
          "[response_matrix]") {
  for (const std::string value : {"4", "-1", "1.5", "1e0", "x", "0x1", "10000"}) {
    INFO(value);
    const auto path = write_data("value.csv", "q1,q2\n0,1\n1," + value + "\n");
    const std::string message = read_error(path, ResponseFormat{4, true});
    CHECK_THAT(message, Catch::Contains(path.string() + ":3:2 (item 'q2'): '" + value + "' is not a response"));
    CHECK_THAT(message, Catch::Contains("Fix: an integer 0..3"));
    CHECK_THAT(message, Catch::Contains("empty cell or NA"));
  }
  // Binary items: 2 is out of range, and the fix names 0..1 without inviting missing cells.
  const auto two = write_data("two.csv", "q1,q2\n0,1\n2,1\n");
  const std::string message = read_error(two, ResponseFormat{2, false});
  CHECK_THAT(message, Catch::Contains(two.string() + ":3:1 (item 'q1'): '2' is not a response"));
  CHECK_THAT(message, Catch::Contains("Fix: an integer 0..1"));
  CHECK_THAT(message, !Catch::Contains("NA"));
  CHECK(read_error(write_data("three.csv", "q1,q2\n0,1\n3,1\n"), ResponseFormat{4, false}).empty());
}

TEST_CASE("read_response_matrix: a missing cell is refused for a model trained on complete responses",
          "[response_matrix]") {
  for (const std::string cell : {"", "NA", "na", " NA "}) {
    INFO("'" << cell << "'");
    const auto path = write_data("missing.csv", "q1,q2\n0,1\n1," + cell + "\n");
    const std::string message = read_error(path, ResponseFormat{3, false});
    CHECK_THAT(message, Catch::Contains(path.string() + ":3:2 (item 'q2'): a missing response"));
    CHECK_THAT(message, Catch::Contains("Fix: fill the cell with a response 0..2"));
    CHECK_THAT(message, Catch::Contains("simulator.missing"));
    CHECK(read_error(path, ResponseFormat{3, true}).empty());
  }
}

TEST_CASE("read_response_matrix: a UTF-8 byte order mark before the header does not hide the id column",
          "[response_matrix]") {
  const auto path = write_data("bom.csv", "\xEF\xBB\xBFid,q1,q2\np1,0,1\np2,1,0\n");
  const auto matrix = read_response_matrix(path);
  CHECK((matrix.item_names == std::vector<std::string>{"q1", "q2"}));
  CHECK((matrix.person_ids == std::vector<std::string>{"p1", "p2"}));
  CHECK(matrix.source == path.string());
}

TEST_CASE("read_response_matrix: item names in UTF-8 are read; overlong forms, surrogates and past U+10FFFF are not",
          "[response_matrix]") {
  // e acute, the euro sign, an emoji: two, three and four bytes.
  const auto good = write_data("utf8.csv", "caf\xC3\xA9,\xE2\x82\xAC,\xF0\x9F\x98\x80\n1,0,1\n0,1,1\n");
  const auto matrix = read_response_matrix(good, "", ResponseFormat{2, false});
  CHECK((matrix.item_names == std::vector<std::string>{"caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}));
  // '/' written in two bytes, a surrogate half (U+D800), U+110000, and a lead byte past F4.
  for (const std::string bad : {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80"}) {
    INFO("bytes of " << bad.size());
    const auto path = write_data("bad_utf8.csv", "q1,q" + bad + "\n1,0\n0,1\n");
    const auto error = read_error(path, ResponseFormat{2, false});
    CHECK_THAT(error, Catch::Contains(":1:5: not a text file") && Catch::Contains("invalid UTF-8"));
  }
}

TEST_CASE("read_response_matrix: a quoted field holds the delimiter and doubled quotes, as RFC 4180 writes them",
          "[response_matrix]") {
  const auto path = write_data("quoted.csv", "id,\"Q1, reading\", \"say \"\"hi\"\"\" ,q3\np1,0,\"1\",0\np2,1,0,1\n");
  const auto matrix = read_response_matrix(path);
  CHECK((matrix.item_names == std::vector<std::string>{"Q1, reading", "say \"hi\"", "q3"}));
  CHECK(torch::equal(matrix.responses, torch::tensor({0.0f, 1.0f, 0.0f, 1.0f, 0.0f, 1.0f}).reshape({2, 3})));
  CHECK_THAT(read_error(write_data("open.csv", "id,\"q1,q2\np1,0,1\np2,1,0\n"), {}),
             Catch::Contains("open.csv:1:2: a quoted field is not closed on its line") && Catch::Contains("Fix:"));
  CHECK_THAT(read_error(write_data("after.csv", "id,\"q1\"x,q2\np1,0,1\np2,1,0\n"), {}),
             Catch::Contains("after.csv:1:2: text after a quoted field's closing quote"));
}

TEST_CASE("read_response_groups: a long file is its groups' data sets, each as if read alone", "[response_matrix]") {
  const std::string text = "id,country,q1,q2\np1,NO,0,1\np2,DE,1,NA\np3,NO,1,1\np4,DE,0,0\np5,FR,1,1\np6,DE,1,0\n";
  const auto groups = inference::read_response_groups(write_data("long.csv", text), "", "country", ResponseFormat{2, true});
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].name == "NO");
  CHECK(groups[1].name == "DE");
  CHECK(groups[2].name == "FR");
  // Each group's matrix is what the file of its rows alone gives.
  const auto alone = read_response_matrix(write_data("de.csv", "id,q1,q2\np2,1,NA\np4,0,0\np6,1,0\n"), "",
                                          ResponseFormat{2, true});
  REQUIRE(groups[1].matrix);
  CHECK(groups[1].matrix->item_names == alone.item_names);
  CHECK(groups[1].matrix->person_ids == alone.person_ids);
  CHECK(torch::equal(groups[1].matrix->responses, alone.responses));
  CHECK(torch::equal(groups[1].matrix->mask, alone.mask));
  // One person is not a data set: that group says so, the others are read.
  CHECK_FALSE(groups[2].matrix);
  CHECK_THAT(groups[2].error, Catch::Contains("(country FR): 1 person(s)"));
  CHECK(groups[0].matrix);
}

TEST_CASE("read_response_groups: a bad cell fails its group only, a missing column or group value the whole file",
          "[response_matrix]") {
  const auto path = write_data("long2.csv", "g,q1,q2\na,0,1\na,1,7\nb,1,1\nb,0,0\n");
  const auto groups = inference::read_response_groups(path, "", "g");
  REQUIRE(groups.size() == 2);
  CHECK_FALSE(groups[0].matrix);
  CHECK_THAT(groups[0].error, Catch::Contains(path.string() + ":3:3 (item 'q2'): '7' is not a response"));
  CHECK(groups[1].matrix);
  CHECK_THROWS_WITH(inference::read_response_groups(path, "", "wave"),
                    Catch::Contains("no column named 'wave'") && Catch::Contains("--group-column"));
  const auto blank = write_data("long3.csv", "g,q1\na,0\n,1\n");
  CHECK_THROWS_WITH(inference::read_response_groups(blank, "", "g"),
                    Catch::Contains(blank.string() + ":3:1: an empty g"));
}
