// What the tests of the Kineto JSON importer share (kineto_importer_test.cc,
// kineto_bad_input_test.cc): the test data's paths, a fixture that writes traces into a temporary
// directory, a dump of every table to compare two imports, and a minimal trace around some events.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "importers/importer.h"
#include "importers/inputs.h"
#include "importers/kineto/kineto_events_reader.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/kineto/kineto_names.h"
#include "importers/kineto/kineto_numbers.h"
#include "importers/kineto/kineto_parser.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/status.h"

namespace sightline::kineto_test {

constexpr int64_t kBase = 1767189312000000000;  // basic.json's baseTimeNanoseconds

inline std::string DataPath(const std::string& name) {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/" + name;
}

using testing::Slurp;

class KinetoTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTempDir(); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  std::string dir_;
};

inline Trace MustImport(const std::string& path) {
  return testing::ValueOrDie(ImportKinetoJson(path));
}

inline int64_t Count(const Trace& t, DiagCode code) { return t.diagnostics.Count(code); }

// Every column of every table and every diagnostic, as text, to compare two imports.
inline std::string Dump(const Trace& t) {
  std::ostringstream o;
  const KernelTable& k = t.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    o << "K " << k.start_ns[i] << " " << k.end_ns[i] << " " << k.device[i] << " " << k.stream[i]
      << " " << k.pid[i] << " " << t.str(k.name[i]) << " " << k.correlation[i] << " " << k.grid[i].x
      << k.grid[i].y << k.grid[i].z << " " << k.block[i].x << " " << k.registers_per_thread[i]
      << " " << k.static_smem_bytes[i] << " " << k.dynamic_smem_bytes[i] << " " << k.launch_call[i]
      << "\n";
  }
  const MemOpTable& m = t.memops;
  for (size_t i = 0; i < m.size(); ++i) {
    o << "M " << m.start_ns[i] << " " << m.end_ns[i] << " " << m.device[i] << " " << m.stream[i]
      << " " << MemOpKindName(m.kind[i]) << " " << MemoryKindName(m.src_kind[i]) << " "
      << MemoryKindName(m.dst_kind[i]) << " " << m.size_bytes[i] << " " << m.launch_call[i] << "\n";
  }
  const ApiCallTable& a = t.api_calls;
  for (size_t i = 0; i < a.size(); ++i) {
    o << "A " << a.start_ns[i] << " " << a.end_ns[i] << " " << a.pid[i] << " " << a.tid[i] << " "
      << t.str(a.name[i]) << " " << static_cast<int>(a.kind[i]) << " " << a.correlation[i] << "\n";
  }
  const RangeTable& r = t.ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    o << "R " << r.start_ns[i] << " " << r.end_ns[i] << " " << r.pid[i] << " " << r.tid[i] << " "
      << t.str(r.name[i]) << " " << RangeKindName(r.kind[i]) << " " << r.depth[i] << " "
      << t.str(r.shapes[i]) << "\n";
  }
  for (const Diagnostic& d : t.diagnostics.items())
    o << "D " << d.code() << " " << d.detail << " " << d.count << "\n";
  for (const ProcessInfo& p : t.processes) o << "P " << p.pid << " " << p.name << "\n";
  for (const ThreadInfo& th : t.threads)
    o << "T " << th.pid << " " << th.tid << " " << th.name << "\n";
  for (const DeviceInfo& d : t.devices)
    o << "G " << d.id << " " << d.name << " " << d.sm_count << "\n";
  o << "S " << t.source.format_version << " " << t.source.producer << " " << t.source.rank << " "
    << t.source.world_size << " " << t.begin_ns() << " " << t.end_ns() << "\n";
  return o.str();
}

// A minimal trace around `events`, with `before` / `after` top-level fields.
inline std::string TraceJson(const std::string& events, const std::string& before = "",
                             const std::string& after = "") {
  return "{" + before + (before.empty() ? "" : ", ") + "\"traceEvents\": [" + events + "]" +
         (after.empty() ? "" : ", ") + after + "}";
}

inline const char* kKernelEvent =
    R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1000.5, "dur": 2,
        "args": {"device": 0, "stream": 7, "correlation": 1}})";

}  // namespace sightline::kineto_test
