// `sightline mcp` driven as a subprocess over its standard input and output: initialize,
// notifications, tools/list, tools/call of each tool, tool errors (isError) and protocol errors
// (JSON-RPC errors); one reply a line, none to a notification.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <sstream>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Mcp, ASessionOverStdio) {
  const std::string sample =
      std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.nsys.sqlite";
  const std::vector<std::string> requests = {
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}})",
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
      R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})",
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"query","arguments":{"sql":"SELECT 1"}}})",
      R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"analyze","arguments":{"inputs":[")" +
          sample + R"("]}}})",
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"findings","arguments":{"max":3}}})",
      R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"table","arguments":{"section":"kernel_summary","table":"kernels","max_rows":1}}})",
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"query","arguments":{"sql":"SELECT count(*) AS n FROM kernels WHERE dur_ns > :d","params":{"d":10000}}}})",
      R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"explain_finding","arguments":{"id":"launch_bound"}}})",
      R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"query","arguments":{"sql":"DELETE FROM kernels"}}})",
      R"({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}})",
      R"({"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"table","arguments":{"section":7}}})",
      R"({"jsonrpc":"2.0","id":12,"method":"resources/list"})",
      R"(not json)",
      R"({"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"diff","arguments":{"baseline":")" +
          sample + R"(","candidate":")" + sample + R"("}}})",
  };
  std::string input;
  for (const std::string& r : requests) input += r + "\n";
  const std::string dir = testing::MakeTempDir();
  ASSERT_TRUE(WriteFileAtomically(dir + "/in.jsonl", input).ok());
  const auto run = testing::RunSightline("mcp < " + dir + "/in.jsonl");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> replies = Lines(run.out);
  ASSERT_EQ(replies.size(), requests.size() - 1) << run.out;  // none to the notification

  simdjson::dom::parser parser;
  std::vector<simdjson::dom::element> r;
  std::vector<std::string> keep = replies;  // the parser reads in place
  std::vector<simdjson::dom::parser> parsers(keep.size());
  for (size_t i = 0; i < keep.size(); ++i) {
    simdjson::dom::element e;
    ASSERT_EQ(parsers[i].parse(keep[i]).get(e), simdjson::SUCCESS) << keep[i];
    r.push_back(e);
  }
  auto str = [](simdjson::simdjson_result<simdjson::dom::element> e) {
    std::string_view s;
    return e.get(s) == simdjson::SUCCESS ? std::string(s) : std::string("<none>");
  };
  auto integer = [](simdjson::simdjson_result<simdjson::dom::element> e) {
    int64_t v = -1;
    return e.get(v) == simdjson::SUCCESS ? v : -1;
  };
  auto is_error = [](simdjson::dom::element e) {
    bool b = false;
    return e["result"]["isError"].get(b) == simdjson::SUCCESS && b;
  };
  // initialize
  EXPECT_EQ(str(r[0]["result"]["protocolVersion"]), "2025-06-18");
  EXPECT_EQ(str(r[0]["result"]["serverInfo"]["name"]), "sightline");
  // tools/list: the six tools, each with an input schema
  simdjson::dom::array tools;
  ASSERT_EQ(r[1]["result"]["tools"].get(tools), simdjson::SUCCESS);
  std::string names;
  for (simdjson::dom::element t : tools) {
    names += str(t["name"]) + " ";
    EXPECT_EQ(str(t["inputSchema"]["type"]), "object");
  }
  EXPECT_EQ(names, "analyze findings table query diff explain_finding ");
  // A query before any run: the tool's error.
  EXPECT_TRUE(is_error(r[2]));
  // analyze: the string id comes back as sent.
  EXPECT_EQ(str(r[3]["id"]), "a");
  EXPECT_FALSE(is_error(r[3])) << keep[3];
  EXPECT_EQ(str(r[3]["result"]["structuredContent"]["run"]), "run1");
  // findings: each number with its source
  simdjson::dom::array findings;
  ASSERT_EQ(r[4]["result"]["structuredContent"]["findings"].get(findings), simdjson::SUCCESS);
  ASSERT_GT(findings.size(), 0u);
  EXPECT_EQ(str(findings.at(0)["id"]), "launch_bound");
  EXPECT_EQ(str(findings.at(0)["evidence"].at(0)["source"])
                .rfind("finding 0 (launch_bound), evidence ", 0),
            0u);
  // table: the kernel table's first row, with its source and units
  simdjson::dom::element row;
  ASSERT_EQ(r[5]["result"]["structuredContent"]["rows"].at(0).get(row), simdjson::SUCCESS);
  EXPECT_EQ(integer(row["instances"]), 1088);
  EXPECT_EQ(str(row["source"]), "section kernel_summary (input 0), table kernels, row 0");
  EXPECT_EQ(str(r[5]["result"]["structuredContent"]["units"]["total_ns"]), "ns");
  // query with a parameter
  EXPECT_GT(integer(r[6]["result"]["structuredContent"]["rows"].at(0).at(0)), 0);
  // explain_finding by rule id
  EXPECT_EQ(str(r[7]["result"]["structuredContent"]["finding"]["id"]), "launch_bound");
  EXPECT_NE(str(r[7]["result"]["structuredContent"]["finding"]["recommendation"]), "<none>");
  // A write: the tool's error, saying why.
  EXPECT_TRUE(is_error(r[8]));
  EXPECT_NE(str(r[8]["result"]["content"].at(0)["text"]).find("refused"), std::string::npos);
  // Protocol errors: unknown tool, bad arguments, unknown method, not JSON.
  EXPECT_EQ(integer(r[9]["error"]["code"]), -32602);
  EXPECT_EQ(integer(r[10]["error"]["code"]), -32602);
  EXPECT_EQ(integer(r[11]["error"]["code"]), -32601);
  EXPECT_EQ(integer(r[12]["error"]["code"]), -32700);
  // diff of a run against itself
  EXPECT_FALSE(is_error(r[13])) << keep[13].substr(0, 400);
  bool failed = true;
  EXPECT_EQ(r[13]["result"]["structuredContent"]["gate"]["failed"].get(failed), simdjson::SUCCESS);
  EXPECT_FALSE(failed);
}

}  // namespace
}  // namespace sightline
