#include "agent/mcp_server.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "agent/mcp_tools.h"
#include "base/json_writer.h"

namespace sightline {

struct McpServer::State {
  McpRuns runs;
};

namespace {

// JSON-RPC error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

constexpr size_t kMaxLine = 16u << 20;

std::string Error(const std::string& id, int code, std::string_view message) {
  JsonWriter w(0);
  w.BeginObject().Key("code").Int(code).Key("message").String(message).EndObject();
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"error":{}}})", id, w.str());
}

std::string Result(const std::string& id, std::string_view result) {
  return fmt::format(R"({{"jsonrpc":"2.0","id":{},"result":{}}})", id, result);
}

std::string Escaped(std::string_view s) {
  std::string out;
  JsonWriter::AppendEscaped(out, s);  // quotes included
  return out;
}

}  // namespace

McpServer::McpServer() : state_(std::make_unique<State>()) {}
McpServer::~McpServer() = default;

std::string McpServer::Handle(std::string_view line) {
  if (line.size() > kMaxLine) return Error("null", kInvalidRequest, "message over 16 MiB");
  simdjson::dom::parser parser;
  simdjson::dom::element msg;
  if (parser.parse(line.data(), line.size()).get(msg) != simdjson::SUCCESS) {
    return Error("null", kParseError, "not JSON");
  }
  simdjson::dom::object obj;
  if (msg.get(obj) != simdjson::SUCCESS) {
    return Error("null", kInvalidRequest,
                 "a JSON-RPC request is an object (batches are not taken)");
  }
  // The id as sent (a number or a string); none: a notification, which gets no reply.
  simdjson::dom::element id_element;
  const bool has_id = obj["id"].get(id_element) == simdjson::SUCCESS;
  std::string id = "null";
  if (has_id) {
    if (!id_element.is_string() && !id_element.is_int64() && !id_element.is_uint64()) {
      return Error("null", kInvalidRequest, "id must be a string or an integer");
    }
    id = simdjson::minify(id_element);
  }
  std::string_view method, version;
  if (obj["jsonrpc"].get(version) != simdjson::SUCCESS || version != "2.0" ||
      obj["method"].get(method) != simdjson::SUCCESS) {
    return Error(id, kInvalidRequest, "expected {\"jsonrpc\": \"2.0\", \"method\": ..., ...}");
  }
  if (!has_id) return "";  // notifications/initialized, notifications/cancelled, ...
  simdjson::dom::element params;
  const bool has_params = obj["params"].get(params) == simdjson::SUCCESS;
  if (method == "initialize") {
    JsonWriter w(0);
    w.BeginObject().Key("protocolVersion").String(kMcpProtocolVersion);
    w.Key("capabilities").BeginObject().Key("tools").BeginObject().Key("listChanged").Bool(false);
    w.EndObject().EndObject().Key("serverInfo").BeginObject().Key("name").String("sightline");
    w.Key("version").String(SIGHTLINE_VERSION).EndObject();
    w.Key("instructions")
        .String(
            "Sightline answers questions about GPU traces of LLM inference (nsys exports, PyTorch "
            "profiler traces, sightline recordings). Call `analyze` with the run's files first, "
            "then `findings`, `table`, `query` (SQL, docs/query.md), `diff` and "
            "`explain_finding`. Every number carries its source: cite it. docs/skills/sightline/"
            "SKILL.md says what to ask first.");
    w.EndObject();
    return Result(id, w.str());
  }
  if (method == "ping") return Result(id, "{}");
  if (method == "tools/list") return Result(id, fmt::format(R"({{"tools":{}}})", McpToolList()));
  if (method == "tools/call") {
    std::string_view name;
    if (!has_params || params["name"].get(name) != simdjson::SUCCESS) {
      return Error(id, kInvalidParams, "tools/call: params.name (the tool) is required");
    }
    simdjson::dom::element args;
    simdjson::dom::object args_obj;
    if (params["arguments"].get(args) != simdjson::SUCCESS) {
      // No arguments: an empty object.
      static simdjson::dom::parser empty_parser;
      args = empty_parser.parse(std::string_view("{}")).value();
    } else if (args.get(args_obj) != simdjson::SUCCESS) {
      return Error(id, kInvalidParams, "tools/call: params.arguments must be an object");
    }
    bool tool_error = false;
    StatusOr<std::string> out = std::string();
    try {
      out = CallMcpTool(state_->runs, name, args, &tool_error);
    } catch (const std::exception& e) {
      out = std::string(e.what());
      tool_error = true;
    }
    if (!out.ok()) return Error(id, kInvalidParams, out.status().message());
    // The answer as text (for clients that read only text) and, when it is JSON, as structured
    // content.
    const std::string& text = *out;
    std::string result =
        fmt::format(R"({{"content":[{{"type":"text","text":{}}}],)", Escaped(text));
    if (!tool_error) result += fmt::format(R"("structuredContent":{},)", text);
    result += fmt::format(R"("isError":{}}})", tool_error ? "true" : "false");
    return Result(id, result);
  }
  return Error(id, kMethodNotFound, fmt::format("no method {}", method));
}

void McpServer::Serve(std::FILE* in, std::FILE* out) {
  std::string line;
  bool too_long = false;
  int c = 0;
  while ((c = std::fgetc(in)) != EOF) {
    if (c != '\n') {
      if (line.size() < kMaxLine + 1)
        line.push_back(static_cast<char>(c));
      else
        too_long = true;
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string reply;
    if (too_long) {
      reply = Error("null", kInvalidRequest, "message over 16 MiB");
    } else if (!line.empty()) {
      reply = Handle(line);
    }
    if (!reply.empty()) {
      reply += "\n";
      if (std::fwrite(reply.data(), 1, reply.size(), out) != reply.size()) return;
      std::fflush(out);
    }
    line.clear();
    too_long = false;
  }
}

}  // namespace sightline
