// A saved query database (`sightline query --save`, docs/query.md) reopened from arbitrary bytes:
// QueryDb::LooksLikeQueryDb and QueryDb::Open must refuse the file or answer questions within
// their bounds, never crash or hang, and never write: the file is compared byte for byte after
// each input, and neither a journal nor a WAL may appear beside it. The seeds are a small trace's
// database in 512-byte pages (fuzz/seeds/query_db) and, made from it by fuzz/gather_seeds.sh,
// the same in hostile schema shapes (views, triggers, a virtual table, a generated column, other
// page sizes). Each database that opens is asked every table's first rows and the saved
// questions, each under a short time limit.
// CI executions: 3000
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/file_io.h"
#include "fuzz_support.h"
#include "query/named_queries.h"
#include "query/query_db.h"
#include "query/query_schema.h"

namespace {

void Ask(const sightline::QueryDb& db) {
  const sightline::QueryLimits limits{0.5, 20};
  for (const sightline::QueryCatalogueTable& t : db.catalogue()) {
    (void)db.Run("SELECT * FROM " + sightline::QuoteSqlName(t.name) + " LIMIT 20", limits);
  }
  for (const sightline::NamedQuery& q : sightline::NamedQueries()) (void)db.Run(q.sql, limits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = sightline::fuzz::AsView(data, size);
  const std::string path = sightline::fuzz::WriteInputFile(bytes, ".sldb");
  // Both ways in: the sniffing `sightline query` does, and Open, which checks by itself what
  // LooksLikeQueryDb let through.
  (void)sightline::QueryDb::LooksLikeQueryDb(path);
  {
    sightline::StatusOr<sightline::QueryDb> db = sightline::QueryDb::Open(path);
    if (db.ok()) Ask(*db);
  }
  sightline::StatusOr<std::string> after = sightline::ReadFileToString(path);
  std::error_code ec;
  if (!after.ok() || *after != bytes || std::filesystem::exists(path + "-journal", ec) ||
      std::filesystem::exists(path + "-wal", ec)) {
    std::fprintf(stderr, "fuzz_query_db: the database file was written\n");
    std::abort();
  }
  return 0;
}
