// Tests for the PyTorch memory snapshot importer (importers/torch_snapshot/): the plain-data pickle
// reader (refusal of code, truncation, damage) and the mapping into memory events that the memory
// analysis reads. Inputs: tests/data/torch_snapshot/ (written by make_snapshots.py there, whose
// comments give the figures checked here) and the shared PyTorch 2.11 snapshot when present.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyses/memory/memory.h"
#include "base/file_io.h"
#include "base/input_data.h"
#include "importers/importer.h"
#include "importers/torch_snapshot/pickle_reader.h"
#include "importers/torch_snapshot/snapshot_replay.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/files.h"
#include "testing/status.h"

namespace sightline {
namespace {

using testing::Ctx;
constexpr int64_t kMiB = int64_t{1} << 20;

std::string DataPath(const std::string& name) {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/torch_snapshot/" + name;
}

std::string ReadData(const std::string& name) {
  return testing::ValueOrDie(ReadFileToString(DataPath(name)));
}

int64_t DiagCount(const Trace& t, std::string_view code) {
  int64_t n = 0;
  for (const Diagnostic& d : t.diagnostics.items()) {
    if (d.code() == code) n += d.count;
  }
  return n;
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// pickle.dumps({'a': [1, -2, 300, 70000, 2**40, -2**63], 'b': ('x', None, True, 1.5)}, N).hex()
constexpr std::string_view kPlainP4 =
    "80049544000000000000007d94288c0161945d94284b014afeffffff4d2c014a701101008a060000000000018a08"
    "0000000000000080658c016294288c0178944e88473ff80000000000007494752e";
constexpr std::string_view kPlainP2 =
    "80027d71002858010000006171015d7102284b014afeffffff4d2c014a701101008a060000000000018a08000000"
    "0000000080655801000000627103285801000000787104 4e88473ff8000000000000747105752e";

TEST(PickleReader, PlainValues) {
  std::string p2(kPlainP2);
  p2.erase(std::remove(p2.begin(), p2.end(), ' '), p2.end());
  for (const std::string& p : {FromHex(kPlainP4), FromHex(p2)}) {
    StatusOr<PickleDoc> doc = ReadPlainPickle(p);
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    const PickleValue* a = doc->Get(doc->root, "a");
    ASSERT_NE(a, nullptr);
    const auto* list = doc->List(*a);
    ASSERT_NE(list, nullptr);
    ASSERT_EQ(list->size(), 6u);
    EXPECT_EQ((*list)[0].i, 1);
    EXPECT_EQ((*list)[1].i, -2);
    EXPECT_EQ((*list)[2].i, 300);
    EXPECT_EQ((*list)[3].i, 70000);
    EXPECT_EQ((*list)[4].i, int64_t{1} << 40);
    EXPECT_EQ((*list)[5].i, INT64_MIN);
    const PickleValue* b = doc->Get(doc->root, "b");
    ASSERT_NE(b, nullptr);
    const auto* t = doc->List(*b);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->size(), 4u);
    std::string_view x;
    EXPECT_TRUE(doc->Str((*t)[0], &x));
    EXPECT_EQ(x, "x");
    EXPECT_EQ((*t)[1].kind, PickleValue::Kind::kNone);
    EXPECT_EQ((*t)[2].i, 1);
    EXPECT_DOUBLE_EQ((*t)[3].f, 1.5);
  }
}

TEST(PickleReader, RefusesObjects) {
  // pickle.dumps(datetime.date(...), protocol=4): STACK_GLOBAL at byte 29 (python3 -m pickletools).
  StatusOr<PickleDoc> p4 = ReadPlainPickle(ReadData("object_p4.pickle"));
  ASSERT_FALSE(p4.ok());
  EXPECT_EQ(p4.status().message(),
            "not a memory snapshot: pickle opcode STACK_GLOBAL at byte 29 (Sightline reads only "
            "plain data pickles)");
  // Protocol 2: GLOBAL 'datetime date' at byte 2.
  StatusOr<PickleDoc> p2 = ReadPlainPickle(ReadData("object_p2.pickle"));
  ASSERT_FALSE(p2.ok());
  EXPECT_NE(p2.status().message().find("pickle opcode GLOBAL at byte 2 "), std::string::npos);
  // REDUCE alone (a call of whatever is on the stack), BUILD, and a byte that is no opcode.
  for (const auto& [bytes, name] : std::vector<std::pair<std::string, std::string>>{
           {std::string("\x80\x04N)R.", 6), "REDUCE at byte 4"},
           {std::string("\x80\x04}}b.", 6), "BUILD at byte 4"},
           {std::string("\x80\x04\xff.", 4), "0xff at byte 2"},
           {std::string("\x80\x04(I1\n.", 7), "INT at byte 3"}}) {
    StatusOr<PickleDoc> r = ReadPlainPickle(bytes);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.status().message().find("pickle opcode " + name), std::string::npos)
        << r.status().message();
  }
}

TEST(PickleReader, EveryTruncationIsAnError) {
  const std::string full = ReadData("history.pickle");
  ASSERT_GT(full.size(), 1000u);
  ASSERT_TRUE(ReadPlainPickle(full).ok());
  for (size_t n = 0; n < full.size(); ++n) {
    StatusOr<PickleDoc> r = ReadPlainPickle(std::string_view(full).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  }
  StatusOr<PickleDoc> cut = ReadPlainPickle(std::string_view(full).substr(0, full.size() / 2));
  EXPECT_NE(cut.status().message().find("ends early"), std::string::npos) << cut.status().message();
}

TEST(PickleReader, MemoryIsBounded) {
  const std::string full = ReadData("history.pickle");
  ASSERT_TRUE(ReadPlainPickle(full, 1 << 20).ok());
  StatusOr<PickleDoc> r = ReadPlainPickle(full, 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("SIGHTLINE_MAX_INPUT_SIZE"), std::string::npos)
      << r.status().message();
}

TEST(PickleReader, DamageAndCycles) {
  // APPEND with nothing below, a memo never stored, a key without a value, STOP with two values.
  for (const std::string& bad :
       {std::string("\x80\x04K\x01"
                    "a.",
                    6),
        std::string("\x80\x04h\x05.", 5), std::string("\x80\x04}(K\x01u.", 8),
        std::string("\x80\x04NN.", 5)}) {
    StatusOr<PickleDoc> r = ReadPlainPickle(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  }
  // A list that holds itself (l = []; l.append(l)): built without recursion, freed without leaks.
  StatusOr<PickleDoc> self =
      ReadPlainPickle(std::string("\x80\x04]\x94h\x00"
                                  "a.",
                                  8));
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  const auto* l = self->List(self->root);
  ASSERT_NE(l, nullptr);
  ASSERT_EQ(l->size(), 1u);
  EXPECT_EQ((*l)[0].ref, self->root.ref);
  // Such a cycle where a snapshot has its device_traces is not a snapshot, and does not hang.
  std::string cyc =
      "\x80\x04}\x94\x8c\x0d"
      "device_traces]\x94h\x01"
      "a";
  cyc += std::string("s.", 2);
  StatusOr<Trace> t = ImportTorchSnapshotBytes(cyc, "cycle.pickle");
  EXPECT_TRUE(t.ok() || t.status().code() == StatusCode::kInvalidInput);
}

// The history records the size asked for; the allocator counts whole blocks of 512 B multiples.
TEST(TorchSnapshot, SizesAreRoundedAsTheAllocatorRounds) {
  EXPECT_EQ(torch_snapshot::RoundLikeAllocator(8), 512);
  EXPECT_EQ(torch_snapshot::RoundLikeAllocator(512), 512);
  EXPECT_EQ(torch_snapshot::RoundLikeAllocator(513), 1024);
  EXPECT_EQ(torch_snapshot::RoundLikeAllocator(585'728), 585'728);  // a static cache's keys
  EXPECT_EQ(torch_snapshot::RoundLikeAllocator(0), 0);
}

TEST(TorchSnapshot, SniffedAndImported) {
  StatusOr<Trace> t = ImportTrace(DataPath("history.pickle"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->source.format, "torch-memory-snapshot");
  // 3 allocations, 2 frees (free_requested), 3 segment changes; free_completed adds nothing; and
  // segment C's block from before the history (alive at the dump, never allocated in it).
  EXPECT_EQ(t->memory_events.size(), 9u);
  EXPECT_EQ(DiagCount(*t, "torch_snapshot_oom"), 1);
  EXPECT_EQ(DiagCount(*t, "torch_snapshot_entry_unusable"), 1);  // the unknown "teleport"
  EXPECT_EQ(DiagCount(*t, "torch_snapshot_totals_inconsistent"), 0);
}

TEST(TorchSnapshot, PeakReservedAndCallSites) {
  StatusOr<Trace> t = ImportTrace(DataPath("history.pickle"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);  // device 1's history is empty and it has no segments
  const DeviceMemory& d = r->devices[0];
  EXPECT_TRUE(d.allocator_totals);
  EXPECT_EQ(d.allocations, 3);
  EXPECT_EQ(d.frees, 2);
  // 1 MiB allocated before the history (the dump's 17 MiB - the history's net 16 MiB): the dump's
  // block in segment C, which the history never allocates, with its own frames; nothing else.
  EXPECT_EQ(d.predating_allocations, 1);
  EXPECT_EQ(d.predating_bytes, 1 * kMiB);
  EXPECT_EQ(d.before_bytes, 0);
  EXPECT_EQ(d.peak_bytes, 17 * kMiB + kMiB / 2);
  EXPECT_EQ(d.peak_ns - t->memory_events.time_ns.front(), 6'000);  // 6 us after the first entry
  EXPECT_EQ(d.reserved_at_peak_bytes, 24 * kMiB);
  EXPECT_EQ(d.max_reserved_bytes, 24 * kMiB);
  EXPECT_EQ(d.first_reserved_bytes, 4 * kMiB);
  EXPECT_EQ(d.end_reserved_bytes, 22 * kMiB);  // the dump's segments
  EXPECT_EQ(d.end_bytes, 17 * kMiB);           // the dump's active_allocated blocks
  EXPECT_EQ(d.at_peak_count, 3);
  EXPECT_EQ(d.at_peak_bytes, d.peak_bytes);  // all of the peak is explained
  ASSERT_EQ(d.by_site.size(), 2u);
  EXPECT_EQ(d.by_site[0].name, "aten::mm @ model.py:60 forward");  // torch/nn/functional.py skipped
  EXPECT_EQ(d.by_site[0].bytes, 16 * kMiB);
  EXPECT_EQ(d.by_site[1].name, "aten::empty_memory_format @ model.py:50 forward");
  EXPECT_EQ(d.by_site[1].bytes, kMiB + kMiB / 2);  // the 512 KiB of the history and C's 1 MiB
  EXPECT_TRUE(d.by_op.empty());
}

TEST(TorchSnapshot, WithoutHistoryTheDumpIsTheState) {
  StatusOr<Trace> t = ImportTrace(DataPath("no_history.pickle"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(DiagCount(*t, "torch_snapshot_no_history"), 1);
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_EQ(r->devices[0].peak_bytes, 17 * kMiB);
  EXPECT_EQ(r->devices[0].reserved_at_peak_bytes, 22 * kMiB);
  EXPECT_EQ(r->devices[0].at_peak_count, 2);
}

TEST(TorchSnapshot, CliRefusesObjectsWithExit2AndNoOutput) {
  const std::string dir = testing::MakeTempDir();
  const std::string out = dir + "/report.json";
  testing::CliResult r = testing::RunSightline(
      fmt::format("analyze --format json -o {} {}", out, DataPath("object_p4.pickle")));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not a memory snapshot: pickle opcode STACK_GLOBAL at byte 29"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(ReadFileToString(out).ok());
  // A truncated snapshot: exit 2 too.
  const std::string cut = dir + "/cut.pickle";
  const std::string full = ReadData("history.pickle");
  ASSERT_TRUE(WriteFileAtomically(cut, full.substr(0, 700)).ok());
  r = testing::RunSightline("analyze " + cut);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("cut short"), std::string::npos) << r.err;
}

TEST(TorchSnapshot, CliReportsTheMemorySection) {
  testing::CliResult r =
      testing::RunSightline("analyze --format json " + DataPath("history.pickle"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"at_peak_by_site_device_0\""), std::string::npos);
  EXPECT_NE(r.out.find("aten::mm @ model.py:60 forward"), std::string::npos);
}

// A number from the small truth JSON the program wrote ({"max_alloc": 243269632, ...}).
int64_t TruthValue(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::stoll(json.substr(at + key.size() + 3));
}

// Recorded on an H200 with PyTorch 2.11 (examples/gpu_memory/snapshot_truth.py, run as /tmp/t.py):
// the figures must equal what torch.cuda's counters said in the same process, for the default
// allocator (segment_alloc/segment_free, a record_stream'ed free pending on a side stream,
// empty_cache) and for expandable segments (segment_map/segment_unmap).
TEST(TorchSnapshot, H200RecordingsMatchTorchCounters) {
  for (const std::string mode : {"plain", "exp"}) {
    SCOPED_TRACE(mode);
    const std::string truth = ReadData("h200_" + mode + ".truth.json");
    StatusOr<Trace> t = ImportTrace(DataPath("h200_" + mode + ".pickle"));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_TRUE(t->diagnostics.items().empty());
    StatusOr<MemoryResult> r = ComputeMemory(*Ctx(*t), {});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->devices.size(), 1u);
    const DeviceMemory& d = r->devices[0];
    EXPECT_EQ(d.before_bytes, 0);                             // the history began with the program
    EXPECT_EQ(d.peak_bytes, TruthValue(truth, "max_alloc"));  // torch.cuda.max_memory_allocated
    EXPECT_EQ(d.max_reserved_bytes, TruthValue(truth, "max_res"));   // max_memory_reserved
    EXPECT_EQ(d.end_bytes, TruthValue(truth, "alloc_dump"));         // memory_allocated
    EXPECT_EQ(d.end_reserved_bytes, TruthValue(truth, "res_dump"));  // memory_reserved
    EXPECT_GT(d.peak_bytes, 0);
    // What holds the peak: 136 MiB at line 12 (8 + 128 MiB), 64 MiB at line 4, and cuBLAS's
    // 32 MiB workspace, allocated by the first matmul and kept.
    ASSERT_EQ(d.by_site.size(), 3u);
    EXPECT_EQ(d.by_site[0].name, "aten::empty_memory_format @ t.py:12 <module>");
    EXPECT_EQ(d.by_site[0].bytes, 136 * kMiB);
    EXPECT_EQ(d.by_site[2].name, "aten::mm @ t.py:6 <module>");
    EXPECT_EQ(d.by_site[2].bytes, 32 * kMiB);
  }
}

// The snapshots of examples/programs/hf_generate.py --snapshot on an H200 (PyTorch 2.11,
// transformers 5.17; Llama shape, 4 layers, batch 4, prompt 128, one generate() of 16 new tokens),
// each with its history from before the model was built and a copy whose history starts at the
// first generate() call (tests/data/torch_snapshot/make_hf_samples.py).
struct HfSnapshot {
  std::string truth;
  Trace trace;
  DeviceMemory d;
};

HfSnapshot LoadHf(const std::string& mode, bool late) {
  HfSnapshot h;
  h.truth = ReadData("hf_" + mode + "_h200.truth.json");
  h.trace = testing::ValueOrDie(
      ImportTrace(DataPath("hf_" + mode + "_h200" + (late ? "_late" : "") + ".pickle.gz")));
  MemoryResult r = testing::ValueOrDie(ComputeMemory(*Ctx(h.trace), {}));
  if (r.devices.size() == 1) h.d = r.devices[0];
  return h;
}

int64_t Sum(const PurposeSplit& s) {
  int64_t sum = 0;
  for (const PurposeRow& r : s.rows) sum += r.bytes;
  return sum;
}

// Σ total_size of a snapshot's segments in private pools (segment_pool_id other than (0, 0)), read
// from the pickle itself.
int64_t PrivatePoolBytes(const std::string& name) {
  const std::string bytes = testing::ValueOrDie(ReadInput(DataPath(name)));
  const PickleDoc doc = testing::ValueOrDie(ReadPlainPickle(bytes));
  int64_t sum = 0;
  for (const PickleValue& seg : *doc.List(*doc.Get(doc.root, "segments"))) {
    int64_t size = 0;
    bool private_pool = false;
    for (const PickleValue& part : *doc.List(*doc.Get(seg, "segment_pool_id"))) {
      private_pool |= part.i != 0;
    }
    if (private_pool && doc.GetInt(seg, "total_size", &size)) sum += size;
  }
  return sum;
}

// What the history does not explain comes from the dump's blocks; memory by purpose, at the peak
// and at the dump, adds up to reserved, with nothing left unknown.
TEST(TorchSnapshot, HfGenerateMemoryByPurpose) {
  for (const std::string mode : {"eager", "static"}) {
    const HfSnapshot full = LoadHf(mode, false);
    const HfSnapshot late_copy = LoadHf(mode, true);
    for (const bool late : {false, true}) {
      SCOPED_TRACE(mode + (late ? " late" : ""));
      const HfSnapshot& h = late ? late_copy : full;
      EXPECT_TRUE(h.trace.diagnostics.items().empty());
      const DeviceMemory& d = h.d;
      ASSERT_EQ(d.purpose_at_peak.rows.size(), size_t{kPurposeRows});
      ASSERT_EQ(d.purpose_at_end.rows.size(), size_t{kPurposeRows});
      // The rows add up to what the allocator reserved then.
      EXPECT_EQ(Sum(d.purpose_at_peak), d.reserved_at_peak_bytes);
      EXPECT_EQ(Sum(d.purpose_at_end), d.end_reserved_bytes);
      // Nothing is left unexplained: every allocated byte is a history entry or a dump block
      // with a stack (the history's requested sizes are counted as the allocator's blocks).
      EXPECT_EQ(d.before_bytes, 0);
      EXPECT_EQ(d.purpose_at_peak.rows[kPurposeUnknown].bytes, 0);
      EXPECT_EQ(d.purpose_at_end.rows[kPurposeUnknown].bytes, 0);
      // Weights at the dump: the parameters (param_bytes) and the rotary embedding's two small
      // buffers, each tensor rounded up to the allocator's 512 B blocks: between param_bytes and
      // param_bytes + 512 B per weight allocation.
      const PurposeRow& w = d.purpose_at_end.rows[kPurposeWeights];
      const int64_t params = TruthValue(h.truth, "param_bytes");
      ASSERT_GT(params, 0);
      EXPECT_GE(w.bytes, params);
      EXPECT_LT(w.bytes, params + 512 * w.allocations);
      EXPECT_EQ(w.site, "aten::empty_strided @ modeling_utils.py:3706 to");  // model.to(bf16)
      if (late) {
        // The weights were allocated before the history began: the dump's blocks explain them,
        // and they are in the peak's split, which the history alone left "already allocated".
        EXPECT_GE(d.predating_bytes, w.bytes);
        EXPECT_EQ(d.purpose_at_peak.rows[kPurposeWeights].bytes, w.bytes);
      } else {
        EXPECT_EQ(d.predating_allocations, 0);
      }
      // The state at the dump does not depend on where the history began.
      for (int k = 0; k < kPurposeRows; ++k) {
        EXPECT_EQ(d.purpose_at_end.rows[k].bytes, full.d.purpose_at_end.rows[k].bytes) << k;
      }
      const PurposeRow& kv_peak = d.purpose_at_peak.rows[kPurposeKvCache];
      const PurposeRow& graph_end = d.purpose_at_end.rows[kPurposeGraphPools];
      // generate() drops its cache when it returns: none at the dump.
      EXPECT_EQ(d.purpose_at_end.rows[kPurposeKvCache].bytes, 0);
      if (mode == "static") {
        // The static cache: keys and values of every layer for max_cache_len positions.
        // transformers makes it max_length - 1 = prompt + new_tokens - 1 long (the last token is
        // never attended to); the program's kv_bytes assumes prompt + new_tokens, so the cache is
        // kv_bytes * (P + N - 1) / (P + N). Each of its allocations is at most one 512 B block
        // above what its tensor needs (the keys and values are whole blocks; the cache's small
        // per-layer tensor takes one block).
        const int64_t positions = TruthValue(h.truth, "prompt") + TruthValue(h.truth, "new_tokens");
        const int64_t cache = TruthValue(h.truth, "kv_bytes") * (positions - 1) / positions;
        EXPECT_GE(kv_peak.max_bytes, cache);
        EXPECT_LT(kv_peak.max_bytes, cache + 512 * 4 * TruthValue(h.truth, "layers"));
        if (late) {  // the peak is in the generate() call: the cache is in it
          EXPECT_GE(kv_peak.bytes, cache);
          EXPECT_LT(kv_peak.bytes, cache + 512 * kv_peak.allocations);
          EXPECT_EQ(kv_peak.site,
                    "aten::empty_memory_format @ cache_utils.py:434 lazy_initialization");
        } else {  // the peak is the model's build (fp32, then bf16): no cache yet
          EXPECT_EQ(kv_peak.bytes, 0);
        }
        // The CUDA graph pool (segment_pool_id (0, 1)) holds its segments at the dump, nothing
        // allocated in them: all of it is the pool's, none is slack.
        EXPECT_GT(graph_end.bytes, 0);
        EXPECT_EQ(graph_end.bytes, PrivatePoolBytes("hf_static_h200.pickle.gz"));
        EXPECT_GE(d.purpose_at_peak.rows[kPurposeGraphPools].max_bytes, graph_end.bytes);
      } else {
        // The dynamic cache grows by concatenation: at its largest it holds the final cache
        // (kv_bytes: prompt + new_tokens - 1 positions) and, for a moment, one layer's old keys.
        EXPECT_GE(kv_peak.max_bytes, TruthValue(h.truth, "kv_bytes"));
        EXPECT_LT(kv_peak.max_bytes, TruthValue(h.truth, "kv_bytes") * 5 / 4);
        EXPECT_EQ(graph_end.bytes, 0);
        EXPECT_EQ(d.purpose_at_peak.rows[kPurposeGraphPools].max_bytes, 0);
        // cuBLAS's 32 MiB workspace, made at the first matmul (in the rotary embedding's forward)
        // and kept: the only activation alive at the dump.
        EXPECT_EQ(d.purpose_at_end.rows[kPurposeActivations].bytes, 32 * kMiB);
      }
    }
  }
}

// The shipped snapshots name no machine: the program's checkout and Inductor's per-user cache
// directory were rewritten (make_hf_samples.py); library paths stay.
TEST(TorchSnapshot, ShippedSnapshotsHoldNoIdentity) {
  for (const std::string name :
       {"hf_eager_h200.pickle.gz", "hf_eager_h200_late.pickle.gz", "hf_static_h200.pickle.gz",
        "hf_static_h200_late.pickle.gz", "h200_plain.pickle", "h200_exp.pickle"}) {
    SCOPED_TRACE(name);
    const std::string bytes = testing::ValueOrDie(ReadInput(DataPath(name)));
    const PickleDoc doc = testing::ValueOrDie(ReadPlainPickle(bytes));
    EXPECT_GT(doc.strings.size(), 10u);
    for (const std::string& str : doc.strings) {
      for (std::string_view bad : {"/work/", "/root/", "/Users/", "torchinductor_root", "/home/"}) {
        EXPECT_EQ(str.find(bad), std::string::npos) << str;
      }
    }
  }
}

TEST(TorchSnapshot, CliReadsGzippedSnapshots) {
  testing::CliResult r =
      testing::RunSightline("analyze --format json " + DataPath("hf_static_h200_late.pickle.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"purpose_at_end_device_0\""), std::string::npos);
  EXPECT_NE(r.out.find("CUDA graph pools"), std::string::npos);
}

TEST(TorchSnapshotShared, Torch211Snapshot) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  const std::string path = dir + "/torch2.11_h100_memory_snapshot.pickle";
  if (!ReadFilePrefix(path, 2).ok()) GTEST_SKIP() << "the snapshot is absent";
  StatusOr<Trace> t = ImportTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // Checked with Python (pickle.load): 33 history entries on device 0: 11 alloc, 8 free_requested,
  // 8 free_completed, 6 segment_alloc; 6 segments of 144 MiB, 3 active_allocated blocks of 64 MiB.
  EXPECT_EQ(t->memory_events.size(), 25u);  // 11 + 8 + 6
  EXPECT_EQ(t->diagnostics.items().size(), 0u);
  StatusOr<MemoryResult> r = ComputeMemory(*Ctx(*t), {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceMemory& d = r->devices[0];
  EXPECT_EQ(d.allocations, 11);
  EXPECT_EQ(d.frees, 8);
  EXPECT_EQ(d.before_bytes, 0);  // the history explains the dump: recording began first
  // Replayed in Python: the peak is 96 MiB 6,490,778 us after the first entry, 112 MiB reserved.
  EXPECT_EQ(d.peak_bytes, 100'663'296);
  EXPECT_EQ(d.peak_ns - t->memory_events.time_ns.front(), 6'490'778'000);
  EXPECT_EQ(d.reserved_at_peak_bytes, 117'440'512);
  EXPECT_EQ(d.max_reserved_bytes, 150'994'944);
  EXPECT_EQ(d.end_bytes, 67'108'864);
  EXPECT_EQ(d.at_peak_count, 4);
  ASSERT_FALSE(d.by_site.empty());
  EXPECT_EQ(d.by_site[0].bytes, 33'554'432);
}

}  // namespace
}  // namespace sightline
