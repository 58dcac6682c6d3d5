// Tests of serve/: the paths `maskc serve` reads and writes stay under its folder, and the
// answers of serve/api.h without HTTP (the server itself: tests/serve/serve_http.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "serve/api.h"
#include "serve/paths.h"
#include "tests/mask_fixture.h"
#include "tests/test_util.h"

namespace maskprior::serve {
namespace {

namespace fs = std::filesystem;
using maskprior::testing::TempDir;

/// The status and message of the RequestError `f` throws; {0, ""} when it throws none.
template <class F>
std::pair<int, std::string> refusal(F f) {
  try {
    f();
  } catch (const RequestError& e) {
    return {e.status(), e.what()};
  }
  return {0, ""};
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// DIR = served/ with a spec, a subfolder, a hidden folder and links out of it.
struct ServedFixture {
  TempDir temp;
  std::string root = temp.file("served");
  ServedFixture() {
    fs::create_directories(root + "/sub");
    fs::create_directories(root + "/.hidden");
    write(root + "/a.mask", "mask a\n");
    write(root + "/sub/b.mask", "mask b\n");
    write(root + "/.hidden/c.mask", "mask c\n");
    write(temp.file("secret.mask"), "mask secret\n");
    fs::create_symlink(temp.file("secret.mask"), root + "/out.mask");
    fs::create_symlink(temp.file(""), root + "/up");
    fs::create_symlink(root + "/a.mask", root + "/in.mask");  // a link that stays inside
  }
};

TEST(ServedDirTest, ReadsOnlyUnderTheFolder) {
  ServedFixture f;
  const ServedDir dir(f.root);
  EXPECT_EQ(dir.relative(dir.file_to_read("sub/b.mask")), "sub/b.mask");
  EXPECT_EQ(dir.relative(dir.file_to_read("in.mask")), "a.mask");
  EXPECT_EQ(refusal([&] { dir.file_to_read("../secret.mask"); }).first, 400);
  EXPECT_EQ(refusal([&] { dir.file_to_read("sub/../../secret.mask"); }).first, 400);
  EXPECT_EQ(refusal([&] { dir.file_to_read(f.temp.file("secret.mask")); }).first, 400);
  EXPECT_EQ(refusal([&] { dir.file_to_read(std::string("a.mask\0x", 8)); }).first, 400);
  EXPECT_EQ(refusal([&] { dir.file_to_read(""); }).first, 400);
  const auto out = refusal([&] { dir.file_to_read("out.mask"); });
  EXPECT_EQ(out.first, 403);
  EXPECT_EQ(out.second,
            "'out.mask' leads outside the served folder (a symbolic link out): refused");
  EXPECT_EQ(refusal([&] { dir.file_to_read("up/secret.mask"); }).first, 403);
  EXPECT_EQ(refusal([&] { dir.file_to_read("sub"); }).first, 404);
  EXPECT_EQ(refusal([&] { dir.file_to_read("missing.mask"); }).first, 404);
  EXPECT_EQ(refusal([&] { dir.folder("up"); }).first, 403);
  EXPECT_EQ(dir.relative(dir.folder("")), ".");
}

TEST(ServedDirTest, WritesOnlyUnderTheFolderAndNeverThroughALink) {
  ServedFixture f;
  const ServedDir dir(f.root);
  EXPECT_EQ(dir.relative(dir.file_to_write("sub/new.mask")), "sub/new.mask");
  EXPECT_EQ(refusal([&] { dir.file_to_write("../new.mask"); }).first, 400);
  EXPECT_EQ(refusal([&] { dir.file_to_write("out.mask"); }).first, 403);
  EXPECT_EQ(refusal([&] { dir.file_to_write("in.mask"); }),
            std::pair(403, std::string("'in.mask' is a symbolic link: the server never writes "
                                       "through one")));
  EXPECT_EQ(refusal([&] { dir.file_to_write("up/new.mask"); }).first, 403);
  EXPECT_EQ(refusal([&] { dir.file_to_write("nothing/new.mask"); }).first, 404);
}

TEST(ServedDirTest, ListsFilesUnderTheFolderOnly) {
  ServedFixture f;
  const ServedDir dir(f.root);
  // No link (in or out), nothing in a hidden folder.
  EXPECT_EQ(dir.list_files({".mask"}), (std::vector<std::string>{"a.mask", "sub/b.mask"}));
  EXPECT_NE(maskprior::testing::input_error([&] { ServedDir(f.root + "/a.mask"); }), "");
}

TEST(ServeApiTest, MessagesNameFilesRelativeToTheFolder) {
  EXPECT_EQ(without_root("truth table /srv/d/t.csv: /srv/d/t.csv:3: bad", "/srv/d"),
            "truth table t.csv: t.csv:3: bad");
  EXPECT_EQ(without_root("/srv/dx/t.csv", "/srv/d"), "/srv/dx/t.csv");
}

// A run over several sizes: /api/run gives its headline metric at each size, for the dashboard's
// accuracy-per-size plot (numerically ordered; other runs get an empty list).
TEST(ServeApiTest, RunRepliesWithAccuracyPerSize) {
  ServedFixture f;
  fs::create_directories(f.root + "/run");
  write(f.root + "/run/config.json", R"({"task": "addition", "init": "mask"})");
  write(f.root + "/run/summary.json",
        R"({"sequence_accuracy": 0.5, "by_length": {"20": {"sequence_accuracy": 0.25},)"
        R"( "100": {"sequence_accuracy": 0.0}, "5": {"sequence_accuracy": 1.0}, "x": {}}})");
  ServeOptions options;
  options.dir = f.root;
  const Api api(options);
  const auto reply = nlohmann::json::parse(api.run({{"path", "run"}}).body);
  EXPECT_EQ(reply["metric"], "sequence_accuracy");
  EXPECT_EQ(reply["by_length"], nlohmann::json::parse("[[5, 1.0], [20, 0.25], [100, 0.0]]"));
  write(f.root + "/run/summary.json", R"({"sequence_accuracy": 0.5})");
  EXPECT_EQ(nlohmann::json::parse(api.run({{"path", "run"}}).body)["by_length"],
            nlohmann::json::array());
}

TEST(ServeApiTest, CompileRepliesWithTheMaskOrTheDiagnostic) {
  ServedFixture f;
  ServeOptions options;
  options.dir = f.root;
  const Api api(options);
  std::stringstream spec;
  spec << std::ifstream(std::string(MASKPRIOR_SOURCE_DIR) + "/specs/gotu/parity2.mask").rdbuf();
  const nlohmann::json request = {{"source", spec.str()}, {"params", {{"n", 3}}}};
  const Reply reply = api.compile(request.dump());
  EXPECT_EQ(reply.content_type, "application/octet-stream");
  // 4 + header + 16 cells of float32 and of int32 provenance.
  uint32_t header_bytes = 0;
  std::memcpy(&header_bytes, reply.body.data(), 4);
  EXPECT_EQ(reply.body.size(), 4 + header_bytes + 16 * 8);
  const auto header = nlohmann::json::parse(reply.body.substr(4, header_bytes));
  EXPECT_EQ(header["n"], 4);
  EXPECT_EQ(header["labels"], (nlohmann::json{"cls", "x[0]", "x[1]", "x[2]"}));
  try {
    api.compile(nlohmann::json{{"source", "mask x\ntokens a[2]\nopen a -> b\n"}, {"file", "x.mask"}}
                    .dump());
    ADD_FAILURE() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.diagnostic().where.line, 3);
    EXPECT_EQ(e.diagnostic().where.file, "x.mask");
  }
  EXPECT_EQ(refusal([&] { api.save(R"({"path": "a.txt", "source": "x"})"); }).first, 403);
}

}  // namespace
}  // namespace maskprior::serve
