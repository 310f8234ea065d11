// What the tests of the recorder file importer share (recorder_importer_test.cc,
// recorder_records_test.cc): records and chunks written with the shared format writer
// (src/shared/recorder_format.h), and a diagnostic by its code.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "importers/importer.h"
#include "importers/recorder/gpu_metrics_align.h"
#include "importers/recorder/recorder_importer.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"

namespace sightline::recorder_test {

using recfmt::RecordType;

inline recfmt::ApiBody Api(int64_t start, int64_t end, uint32_t corr, uint32_t name,
                           recfmt::ApiDomain d) {
  recfmt::ApiBody a{};
  a.start_ns = start;
  a.end_ns = end;
  a.pid = 4242;
  a.tid = 7;
  a.correlation = corr;
  a.domain = static_cast<uint32_t>(d);
  a.name_string = name;
  return a;
}

inline recfmt::KernelBody Kernel(int64_t start, int64_t end, uint32_t corr, uint32_t name,
                                 uint32_t graph_id) {
  recfmt::KernelBody k{};
  k.start_ns = start;
  k.end_ns = end;
  k.stream = 13;
  k.correlation = corr;
  k.grid_x = 132;
  k.grid_y = k.grid_z = 1;
  k.block_x = 256;
  k.block_y = k.block_z = 1;
  k.registers_per_thread = 32;
  k.static_smem_bytes = 1024;
  k.dynamic_smem_bytes = 2048;
  k.name_string = name;
  k.graph_id = graph_id;
  k.graph_node_id = graph_id ? 100 + corr : 0;
  return k;
}

// First chunk: process, device, strings, a kernel launch, a graph launch of two kernels, copies.
// Second chunk: NVTX ranges, a driver call, drops, the end record.
inline std::string FirstChunk() {
  recfmt::ChunkBuilder c;
  c.AddString(1, "/usr/bin/decode");
  c.AddString(2, "gpu-host");
  c.AddString(3, "NVIDIA H100 80GB HBM3");
  c.AddString(4, "void gemm<float>(float*, int)");
  c.AddString(5, "cudaLaunchKernel");
  c.AddString(6, "cudaGraphLaunch");
  c.AddString(7, "graph_kernel_a");
  c.AddString(8, "cudaMemcpyAsync");
  recfmt::ProcessBody p{};
  p.pid = 4242;
  p.rank = 1;
  p.world_size = 2;
  p.executable_string = 1;
  p.hostname_string = 2;
  c.Add(RecordType::kProcess, p);
  recfmt::DeviceBody d{};
  d.id = 0;
  d.sm_count = 132;
  d.cc_major = 9;
  d.name_string = 3;
  c.Add(RecordType::kDevice, d);
  c.Add(RecordType::kApi, Api(1000, 1100, 10, 5, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(1200, 1700, 10, 4, 0));
  c.Add(RecordType::kApi, Api(2000, 2100, 11, 6, recfmt::ApiDomain::kRuntime));
  c.Add(RecordType::kKernel, Kernel(2200, 2300, 11, 7, 5));
  c.Add(RecordType::kKernel, Kernel(2300, 2450, 11, 7, 5));
  c.Add(RecordType::kApi, Api(3000, 3050, 12, 8, recfmt::ApiDomain::kRuntime));
  recfmt::MemcpyBody m{};
  m.start_ns = 3100;
  m.end_ns = 3200;
  m.bytes = 4096;
  m.correlation = 12;
  m.copy_kind = 1;  // HtoD
  m.src_kind = 2;   // pinned
  m.dst_kind = 3;   // device
  c.Add(RecordType::kMemcpy, m);
  recfmt::MemsetBody s{};
  s.start_ns = 3300;
  s.end_ns = 3310;
  s.bytes = 4;
  s.correlation = 99;  // its call was not recorded
  s.memory_kind = 3;
  c.Add(RecordType::kMemset, s);
  return c.Finish();
}

inline std::string SecondChunk(bool with_end) {
  recfmt::ChunkBuilder c;
  c.AddString(9, "iteration 0");
  c.AddString(10, "cuCtxSynchronize");
  c.AddString(11, "sightline");
  recfmt::RangeBody r{};
  r.start_ns = 900;
  r.end_ns = 3500;
  r.pid = 4242;
  r.tid = r.end_tid = 7;
  r.name_string = 9;
  r.domain_string = 11;
  r.kind = static_cast<uint32_t>(recfmt::RangeKind::kPushPop);
  c.Add(RecordType::kRange, r);
  c.Add(RecordType::kApi, Api(3600, 3900, 13, 10, recfmt::ApiDomain::kDriver));
  recfmt::SyncBody sync{};
  sync.start_ns = 3600;
  sync.end_ns = 3900;
  sync.correlation = 13;
  c.Add(RecordType::kSync, sync);
  recfmt::DropsBody drops{};
  drops.cupti_dropped_records = 3;
  drops.queue_dropped_records = 2;
  drops.unpaired_ranges = 1;
  c.Add(RecordType::kDrops, drops);
  if (with_end) {
    recfmt::EndBody end{};
    end.records_written = 20;
    c.Add(RecordType::kEnd, end);
  }
  return c.Finish();
}

inline std::string WholeFile() {
  return recfmt::FileHeaderBytes() + FirstChunk() + SecondChunk(true);
}

inline const Diagnostic* FindDiag(const Trace& t, DiagCode code) {
  for (const Diagnostic& d : t.diagnostics.items()) {
    if (d.id == code) return &d;
  }
  return nullptr;
}

}  // namespace sightline::recorder_test
