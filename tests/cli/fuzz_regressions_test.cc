// Replays every input under tests/data/fuzz_regressions/<dir>/. Each once made a reader crash, hang
// or trip a sanitizer (docs/testing.md lists them). A directory named after a reader of the
// registry (importers/inputs.h: "nsys-sqlite", "ncu-csv", ...) is read by that reader, as
// fuzz_reader does; a directory named after another fuzz target by what that target does. The
// document then goes through the whole program (fuzz/whole_program.h). Here each input must come
// back as a document or as an error that names the file, in the normal build and under ASan+UBSan
// (build-asan).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "importers/inputs.h"
#include "importers/kineto/kineto_parser.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "whole_program.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

std::string WriteTemp(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The outcome of one read: a document, which then goes through the whole program, or an error
// whose message names `path`.
void ExpectHandled(StatusOr<InputDocumentValue> document, const std::string& path) {
  if (!document.ok()) {
    EXPECT_NE(document.status().message().find(path), std::string::npos)
        << document.status().ToString();
    return;
  }
  fuzz::RunWholeProgram(*document);
}

// The fuzz targets that are not one reader of the registry, and what each does with its input.
using Replay = std::function<void(const std::string& bytes, const std::string& tmp)>;
const std::map<std::string, Replay>& OtherTargets() {
  static const auto* replays = new std::map<std::string, Replay>{
      {"fuzz_kineto_json",  // the Kineto reader at a parse window set by the input's size
       [](const std::string& bytes, const std::string& tmp) {
         const std::string path = WriteTemp(tmp, "input.json", bytes);
         StatusOr<Trace> trace =
             kineto::ImportKinetoJsonWithWindow(path, size_t{64} << (bytes.size() % 8));
         ExpectHandled(trace.ok() ? StatusOr<InputDocumentValue>(std::move(*trace))
                                  : StatusOr<InputDocumentValue>(trace.status()),
                       path);
       }},
  };
  return *replays;
}

const InputReaderEntry* ReaderNamed(const std::string& name) {
  for (const InputReaderEntry& r : InputReaders()) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

TEST(FuzzRegressions, EveryInputIsHandled) {
  const fs::path root = fs::path(SIGHTLINE_SOURCE_DIR) / "tests/data/fuzz_regressions";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  const std::string tmp = testing::MakeTempDir();
  int inputs = 0;
  for (const fs::directory_entry& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string name = dir.path().filename().string();
    const InputReaderEntry* reader = ReaderNamed(name);
    auto other = OtherTargets().find(name);
    ASSERT_TRUE(reader != nullptr || other != OtherTargets().end())
        << name << " is neither a reader of the registry nor a fuzz target replayed here";
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path())) {
      SCOPED_TRACE(file.path().string());
      const std::string bytes = testing::Slurp(file.path().string());
      if (reader != nullptr) {
        const std::string path = WriteTemp(tmp, "input", bytes);
        ExpectHandled(reader->read(path), path);
      } else {
        other->second(bytes, tmp);
      }
      ++inputs;
    }
  }
  EXPECT_GE(inputs, 8);  // the regressions committed so far
}

}  // namespace
}  // namespace sightline
