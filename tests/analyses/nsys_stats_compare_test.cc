// The key validation of the summary analyses: on real nsys exports (../shared/traces), the kernel,
// API and memory-operation summaries equal what `nsys stats` reports. Two references:
//  1. nsys's own report SQL (cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum,
//     cuda_gpu_mem_size_sum), run here through the sqlite3 C API with the median() and stdev()
//     aggregates that nsys registers, compared unrounded;
//  2. the CSV that nsys stats 2025.3.1 printed for the same files (tests/data/nsys_stats),
//     compared at the CSV's rounding.
// Skips when ../shared/traces is absent.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analyses/api_summary/api_summary.h"
#include "analyses/kernel_summary/kernel_summary.h"
#include "analyses/memops_summary/memops_summary.h"
#include "importers/importer.h"
#include "model/trace_builder.h"
#include "testing/context.h"
#include "testing/files.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::SharedTracesDir;

// ---- nsys's report SQL through sqlite3 --------------------------------------------------------

// median() and stdev() as nsys registers them: the median of an even count is the mean of the two
// middle values; stdev is the sample standard deviation (0 for a single value).
void CollectStep(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto** values = static_cast<std::vector<double>**>(sqlite3_aggregate_context(ctx, sizeof(void*)));
  if (values == nullptr) return;
  if (*values == nullptr) *values = new std::vector<double>();
  if (sqlite3_value_type(argv[0]) != SQLITE_NULL)
    (*values)->push_back(sqlite3_value_double(argv[0]));
}

std::unique_ptr<std::vector<double>> TakeValues(sqlite3_context* ctx) {
  auto** values = static_cast<std::vector<double>**>(sqlite3_aggregate_context(ctx, 0));
  return std::unique_ptr<std::vector<double>>(values == nullptr ? nullptr : *values);
}

void MedianFinal(sqlite3_context* ctx) {
  std::unique_ptr<std::vector<double>> v = TakeValues(ctx);
  if (!v || v->empty()) return sqlite3_result_null(ctx);
  std::sort(v->begin(), v->end());
  const size_t n = v->size();
  sqlite3_result_double(ctx, n % 2 ? (*v)[n / 2] : ((*v)[n / 2 - 1] + (*v)[n / 2]) / 2);
}

void StdevFinal(sqlite3_context* ctx) {
  std::unique_ptr<std::vector<double>> v = TakeValues(ctx);
  if (!v || v->empty()) return sqlite3_result_null(ctx);
  if (v->size() < 2) return sqlite3_result_double(ctx, 0);
  long double mean = 0;
  for (double x : *v) mean += x;
  mean /= v->size();
  long double ss = 0;
  for (double x : *v) ss += (x - mean) * (x - mean);
  sqlite3_result_double(ctx, static_cast<double>(std::sqrt(ss / (v->size() - 1))));
}

struct SqlRow {
  std::string name;
  int64_t total = 0, count = 0, min = 0, max = 0;
  double avg = 0, median = 0, stddev = 0;
};

class NsysDb {
 public:
  explicit NsysDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return;
    sqlite3_create_function(db_, "median", 1, SQLITE_UTF8, nullptr, nullptr, CollectStep,
                            MedianFinal);
    sqlite3_create_function(db_, "stdev", 1, SQLITE_UTF8, nullptr, nullptr, CollectStep,
                            StdevFinal);
  }
  ~NsysDb() { sqlite3_close(db_); }

  bool HasTable(const std::string& table) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db_, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st,
                       nullptr);
    sqlite3_bind_text(st, 1, table.c_str(), -1, SQLITE_TRANSIENT);
    const bool found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
  }

  // Runs a query whose columns are: name, total, count, avg, median, min, max, stddev.
  std::vector<SqlRow> Query(const std::string& sql) {
    std::vector<SqlRow> rows;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sqlite3_errmsg(db_) << "\n" << sql;
      return rows;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
      SqlRow& r = rows.emplace_back();
      const unsigned char* text = sqlite3_column_text(st, 0);
      r.name = text ? reinterpret_cast<const char*>(text) : "";
      r.total = sqlite3_column_int64(st, 1);
      r.count = sqlite3_column_int64(st, 2);
      r.avg = sqlite3_column_double(st, 3);
      r.median = sqlite3_column_double(st, 4);
      r.min = sqlite3_column_int64(st, 5);
      r.max = sqlite3_column_int64(st, 6);
      r.stddev = sqlite3_column_double(st, 7);
    }
    sqlite3_finalize(st);
    return rows;
  }

 private:
  sqlite3* db_ = nullptr;
};

// cuda_gpu_kern_sum (default: names from demangledName, kernel_helper.py's QUERY_KERNEL),
// unrounded.
constexpr char kKernelSql[] = R"(
WITH
  kernel AS (
    SELECT k.*, sid.value AS name
    FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
    LEFT JOIN StringIds AS sid ON sid.id == k.demangledName
  ),
  summary AS (
    SELECT name, sum(end - start) AS total, count(*) AS num, avg(end - start) AS avg,
           median(end - start) AS med, min(end - start) AS min, max(end - start) AS max,
           stdev(end - start) AS stddev
    FROM kernel GROUP BY 1
  )
SELECT name, total, num, avg, med, min, max, stddev FROM summary ORDER BY 2 DESC, 3, name)";

// cuda_api_sum: every row of CUPTI_ACTIVITY_KIND_RUNTIME (runtime and driver), by nameId.
constexpr char kApiSql[] = R"(
WITH
  summary AS (
    SELECT nameId, sum(end - start) AS total, count(*) AS num, avg(end - start) AS avg,
           median(end - start) AS med, min(end - start) AS min, max(end - start) AS max,
           stdev(end - start) AS stddev
    FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1
  )
SELECT ids.value, total, num, avg, med, min, max, stddev
FROM summary LEFT JOIN StringIds AS ids ON ids.id == summary.nameId ORDER BY 2 DESC)";

// cuda_gpu_mem_time_sum (value = duration) and cuda_gpu_mem_size_sum (value = bytes).
std::string MemOpsSql(bool has_memcpy, bool has_memset, const char* value) {
  std::vector<std::string> parts;
  if (has_memcpy) {
    parts.push_back(std::string("SELECT '[CUDA memcpy ' || mos.label || ']' AS name, ") + value +
                    " AS v FROM CUPTI_ACTIVITY_KIND_MEMCPY AS mcpy INNER JOIN "
                    "ENUM_CUDA_MEMCPY_OPER AS mos ON mos.id == mcpy.copyKind");
  }
  if (has_memset) {
    parts.push_back(std::string("SELECT '[CUDA memset]' AS name, ") + value +
                    " AS v FROM CUPTI_ACTIVITY_KIND_MEMSET");
  }
  std::string sub;
  for (size_t i = 0; i < parts.size(); ++i) sub += (i ? " UNION ALL " : "") + parts[i];
  return "WITH memops AS (" + sub +
         ") SELECT name, sum(v), count(*), avg(v), median(v), min(v), max(v), stdev(v) "
         "FROM memops GROUP BY 1 ORDER BY 2 DESC";
}

// ---- nsys stats CSV ---------------------------------------------------------------------------

std::vector<std::vector<std::string>> ReadCsv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  const std::string text = testing::Slurp(path);
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else if (c != '\r') {
      field.push_back(c);
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(field);
    rows.push_back(row);
  }
  if (!rows.empty()) rows.erase(rows.begin());  // header
  return rows;
}

double Num(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// A value printed rounded to `decimals` matches ours.
void ExpectRounded(double ours, const std::string& printed, int decimals, const std::string& what) {
  const double scale = std::pow(10.0, decimals);
  EXPECT_NEAR(std::round(ours * scale) / scale, Num(printed), 0.5 / scale + 1e-9) << what;
}

// ---- the comparisons --------------------------------------------------------------------------

const char* NsysMemOpName(MemOpKind kind) {
  switch (kind) {
    case MemOpKind::kHtoD:
      return "[CUDA memcpy Host-to-Device]";
    case MemOpKind::kDtoH:
      return "[CUDA memcpy Device-to-Host]";
    case MemOpKind::kDtoD:
      return "[CUDA memcpy Device-to-Device]";
    case MemOpKind::kHtoH:
      return "[CUDA memcpy Host-to-Host]";
    case MemOpKind::kPtoP:
      return "[CUDA memcpy Peer-to-Peer]";
    case MemOpKind::kMemset:
      return "[CUDA memset]";
    case MemOpKind::kOther:
      return "?";
  }
  return "?";
}

void ExpectStatsEqual(const DurationStats& ours, const SqlRow& sql, const std::string& what) {
  EXPECT_EQ(ours.total, sql.total) << what;
  EXPECT_EQ(ours.count, sql.count) << what;
  EXPECT_NEAR(ours.mean, sql.avg, 1e-6 * std::max(1.0, std::abs(sql.avg))) << what;
  EXPECT_DOUBLE_EQ(ours.median, sql.median) << what;
  EXPECT_EQ(ours.min, sql.min) << what;
  EXPECT_EQ(ours.max, sql.max) << what;
  EXPECT_NEAR(ours.stddev, sql.stddev, 1e-6 * std::max(1.0, sql.stddev)) << what;
}

void ExpectStatsMatchCsv(double time_pct, const DurationStats& ours,
                         const std::vector<std::string>& csv, const std::string& what) {
  // Time (%), Total, Count, Avg, Med, Min, Max, StdDev, Name
  ASSERT_GE(csv.size(), 9u) << what;
  ExpectRounded(time_pct, csv[0], 1, what + " time%");
  EXPECT_EQ(ours.total, std::llround(Num(csv[1]))) << what;
  EXPECT_EQ(ours.count, std::llround(Num(csv[2]))) << what;
  ExpectRounded(ours.mean, csv[3], 1, what + " avg");
  ExpectRounded(ours.median, csv[4], 1, what + " med");
  EXPECT_EQ(ours.min, std::llround(Num(csv[5]))) << what;
  EXPECT_EQ(ours.max, std::llround(Num(csv[6]))) << what;
  ExpectRounded(ours.stddev, csv[7], 1, what + " stddev");
}

class NsysStatsCompare : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    path_ = SharedTracesDir() + "/" + GetParam() + ".sqlite";
    if (!std::filesystem::exists(path_)) GTEST_SKIP() << path_ << " not found";
    StatusOr<Trace> trace = ImportTrace(path_);
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    trace_ = std::make_unique<Trace>(std::move(trace).value());
  }
  std::string Csv(const char* report) const {
    return std::string(SIGHTLINE_SOURCE_DIR "/tests/data/nsys_stats/") + GetParam() + "_" + report +
           ".csv";
  }

  std::string path_;
  std::unique_ptr<Trace> trace_;
};

TEST_P(NsysStatsCompare, KernelSummaryEqualsNsysSql) {
  NsysDb db(path_);
  std::vector<SqlRow> want;
  if (db.HasTable("CUPTI_ACTIVITY_KIND_KERNEL")) want = db.Query(kKernelSql);
  StatusOr<KernelSummaryResult> got = ComputeKernelSummary(*Ctx(*trace_), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->rows.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(trace_->str(got->rows[i].name), want[i].name) << "row " << i;
    ExpectStatsEqual(got->rows[i].stats, want[i], want[i].name);
  }
}

TEST_P(NsysStatsCompare, KernelSummaryEqualsNsysStatsCsv) {
  const std::vector<std::vector<std::string>> csv = ReadCsv(Csv("cuda_gpu_kern_sum"));
  StatusOr<KernelSummaryResult> got = ComputeKernelSummary(*Ctx(*trace_), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->rows.size(), csv.size());
  for (size_t i = 0; i < csv.size(); ++i) {
    EXPECT_EQ(trace_->str(got->rows[i].name), csv[i][8]) << "row " << i;
    ExpectStatsMatchCsv(got->rows[i].time_pct, got->rows[i].stats, csv[i], csv[i][8]);
  }
}

TEST_P(NsysStatsCompare, ApiSummaryEqualsNsysSql) {
  NsysDb db(path_);
  std::vector<SqlRow> want;
  if (db.HasTable("CUPTI_ACTIVITY_KIND_RUNTIME")) want = db.Query(kApiSql);
  StatusOr<ApiSummaryResult> got = ComputeApiSummary(*Ctx(*trace_), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->rows.size(), want.size());
  for (const SqlRow& w : want) {
    // nsys strips only four-digit "_vNNNN" suffixes in its output; the trace model strips every
    // version suffix of four or more digits (cudaStreamIsCapturing_v10000 ->
    // cudaStreamIsCapturing).
    const std::string_view name = StripApiVersionSuffix(w.name);
    auto it = std::find_if(got->rows.begin(), got->rows.end(),
                           [&](const ApiSummaryRow& r) { return trace_->str(r.name) == name; });
    ASSERT_NE(it, got->rows.end()) << name;
    ExpectStatsEqual(it->stats, w, w.name);
  }
}

TEST_P(NsysStatsCompare, ApiSummaryEqualsNsysStatsCsv) {
  const std::vector<std::vector<std::string>> csv = ReadCsv(Csv("cuda_api_sum"));
  StatusOr<ApiSummaryResult> got = ComputeApiSummary(*Ctx(*trace_), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->rows.size(), csv.size());
  for (size_t i = 0; i < csv.size(); ++i) {
    EXPECT_EQ(trace_->str(got->rows[i].name), StripApiVersionSuffix(csv[i][8])) << "row " << i;
    ExpectStatsMatchCsv(got->rows[i].time_pct, got->rows[i].stats, csv[i], csv[i][8]);
  }
}

TEST_P(NsysStatsCompare, MemOpsSummaryEqualsNsysSql) {
  NsysDb db(path_);
  const bool memcpy = db.HasTable("CUPTI_ACTIVITY_KIND_MEMCPY");
  const bool memset = db.HasTable("CUPTI_ACTIVITY_KIND_MEMSET");
  std::vector<SqlRow> time, size;
  if (memcpy || memset) {
    time = db.Query(MemOpsSql(memcpy, memset, "end - start"));
    size = db.Query(MemOpsSql(memcpy, memset, "bytes"));
  }
  StatusOr<MemOpsSummaryResult> got = ComputeMemOpsSummary(*Ctx(*trace_), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->kinds.size(), time.size());
  for (size_t i = 0; i < time.size(); ++i) {
    const MemOpKindRow& row = got->kinds[i];
    EXPECT_EQ(NsysMemOpName(row.kind), time[i].name) << "row " << i;
    ExpectStatsEqual(row.time, time[i], time[i].name);
    auto s = std::find_if(size.begin(), size.end(),
                          [&](const SqlRow& r) { return r.name == NsysMemOpName(row.kind); });
    ASSERT_NE(s, size.end());
    ExpectStatsEqual(row.size, *s, s->name + " size");
  }
}

TEST_P(NsysStatsCompare, MemOpsSummaryEqualsNsysStatsCsv) {
  const std::vector<std::vector<std::string>> time = ReadCsv(Csv("cuda_gpu_mem_time_sum"));
  const std::vector<std::vector<std::string>> size = ReadCsv(Csv("cuda_gpu_mem_size_sum"));
  StatusOr<MemOpsSummaryResult> got = ComputeMemOpsSummary(*Ctx(*trace_), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->kinds.size(), time.size());
  ASSERT_EQ(got->kinds.size(), size.size());
  for (size_t i = 0; i < time.size(); ++i) {
    const MemOpKindRow& row = got->kinds[i];
    EXPECT_EQ(NsysMemOpName(row.kind), time[i][8]);
    ExpectStatsMatchCsv(row.time_pct, row.time, time[i], time[i][8]);
    // Total (MB), Count, Avg, Med, Min, Max, StdDev (MB, 10^6 bytes, 3 decimals), Operation
    auto s = std::find_if(size.begin(), size.end(), [&](const std::vector<std::string>& r) {
      return r.size() == 8 && r[7] == NsysMemOpName(row.kind);
    });
    ASSERT_NE(s, size.end()) << NsysMemOpName(row.kind);
    ExpectRounded(row.size.total / 1e6, (*s)[0], 3, "total MB");
    EXPECT_EQ(row.size.count, std::llround(Num((*s)[1])));
    ExpectRounded(row.size.mean / 1e6, (*s)[2], 3, "avg MB");
    ExpectRounded(row.size.median / 1e6, (*s)[3], 3, "med MB");
    ExpectRounded(row.size.min / 1e6, (*s)[4], 3, "min MB");
    ExpectRounded(row.size.max / 1e6, (*s)[5], 3, "max MB");
    ExpectRounded(row.size.stddev / 1e6, (*s)[6], 3, "stddev MB");
  }
}

// The shipped sample (recorded by us on an H100; examples/samples/README.md) against the CSV that
// `nsys stats --report cuda_gpu_kern_sum --format csv` printed for it on the GPU machine. Always
// runs.
TEST(NsysStatsShippedSample, KernelSummaryEqualsNsysStatsCsv) {
  const std::string dir = SIGHTLINE_SOURCE_DIR "/examples/samples/";
  StatusOr<Trace> trace = ImportTrace(dir + "llama_decode_h100.nsys.sqlite");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  const std::vector<std::vector<std::string>> csv =
      ReadCsv(dir + "llama_decode_h100.nsys_kern_sum.csv");
  StatusOr<KernelSummaryResult> got = ComputeKernelSummary(*Ctx(*trace), {});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->rows.size(), csv.size());
  ASSERT_GT(csv.size(), 10u);
  for (size_t i = 0; i < csv.size(); ++i) {
    EXPECT_EQ(trace->str(got->rows[i].name), csv[i][8]) << "row " << i;
    ExpectStatsMatchCsv(got->rows[i].time_pct, got->rows[i].stats, csv[i], csv[i][8]);
  }
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, NsysStatsCompare,
                         ::testing::Values("nsys_toy_llama_demo", "nsys_toy_llama_inference_sim",
                                           "nsys_2025_schema_3.20_small"));

}  // namespace
}  // namespace sightline
