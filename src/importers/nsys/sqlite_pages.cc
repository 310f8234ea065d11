#include "importers/nsys/sqlite_pages.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "importers/nsys/sqlite_db.h"

namespace sightline {
namespace {

// SQLite's own limit on a b-tree's depth (BTCURSOR_MAX_DEPTH): deeper is a corrupt file to it.
constexpr int kMaxBtreeDepth = 20;

constexpr uint8_t kInteriorTablePage = 0x05;
constexpr uint8_t kLeafTablePage = 0x0D;

uint32_t Get16(const uint8_t* p) { return uint32_t{p[0]} << 8 | p[1]; }
uint32_t Get32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// Reads the varint at p, which must end before `end`; the bytes it took, 0 when it runs past end.
inline int GetVarint(const uint8_t* p, const uint8_t* end, uint64_t* value) {
  if (p < end && p[0] < 0x80) {
    *value = p[0];
    return 1;
  }
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    if (p + i >= end) return 0;
    v = v << 7 | (p[i] & 0x7f);
    if (p[i] < 0x80) {
      *value = v;
      return i + 1;
    }
  }
  if (p + 8 >= end) return 0;
  *value = v << 8 | p[8];
  return 9;
}

// Bytes of a value of serial type t in a record's body.
inline uint64_t SerialSize(uint64_t t) {
  static constexpr uint8_t kSmall[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  return t < 12 ? kSmall[t] : (t - 12) / 2;
}

// The big-endian two's-complement integer of serial type 1..6 at p.
inline int64_t SerialInt(uint64_t t, const uint8_t* p) {
  switch (t) {
    case 1:
      return static_cast<int8_t>(p[0]);
    case 2:
      return static_cast<int16_t>(p[0] << 8 | p[1]);
    case 3:
      return static_cast<int32_t>(
                 (uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8)) >>
             8;
    case 4:
      return static_cast<int32_t>(Get32(p));
    case 5:
      return static_cast<int64_t>((uint64_t{Get16(p)} << 48) | (uint64_t{Get32(p + 2)} << 16)) >>
             16;
    default:
      return static_cast<int64_t>(uint64_t{Get32(p)} << 32 | Get32(p + 4));
  }
}

// SQLite's column affinity rules (datatype3.html, 3.1): REAL when the declared type names no INT,
// CHAR, CLOB, TEXT or BLOB but REAL, FLOA or DOUB.
bool HasRealAffinity(std::string_view declared) {
  std::string upper(declared);
  for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  auto has = [&](const char* s) { return upper.find(s) != std::string::npos; };
  if (has("INT") || has("CHAR") || has("CLOB") || has("TEXT") || has("BLOB")) return false;
  return has("REAL") || has("FLOA") || has("DOUB");
}

Status NotByPages(const std::string& table, std::string_view why) {
  return UnimplementedError(fmt::format("{} is read through SQLite: {}", table, why));
}

// Walks one table's b-tree in order, decoding each leaf cell's record into the plan's columns.
class TableWalk {
 public:
  TableWalk(const SqlitePages& pages, const SqlitePagePlan& plan, SqlitePageSink& sink)
      : pages_(pages),
        plan_(plan),
        sink_(sink),
        usable_(pages.usable_size()),
        visited_((size_t{pages.page_count()} + 64) / 64),
        types_(plan.record_columns),
        offsets_(plan.record_columns) {}

  Status Run();

 private:
  struct Frame {
    const uint8_t* page;
    uint32_t number;
    uint32_t header;  // where the page header starts (100 on page 1)
    uint32_t cells;
    uint32_t next;  // the next child to visit (cells: the right-most pointer)
    bool leaf;
  };

  Status Corrupt(std::string_view what, uint32_t page) const {
    return InvalidInputError(fmt::format(
        "{}: not a readable SQLite database: it is corrupt or truncated ({} on page {}). Copy the "
        "file again, or export it again with `nsys export --type sqlite`",
        pages_.path(), what, page));
  }
  // Marks page n visited: false when out of range or seen before (a loop, or a page two parents
  // share), which would make the work grow beyond the file's size.
  bool Visit(uint32_t n) {
    if (n == 0 || n > pages_.page_count()) return false;
    uint64_t& word = visited_[n / 64];
    const uint64_t bit = uint64_t{1} << (n % 64);
    if ((word & bit) != 0) return false;
    word |= bit;
    return true;
  }
  Status Enter(uint32_t number, Frame* frame);
  Status ReadLeaf(const Frame& frame);
  // The payload of a cell that spills to overflow pages, gathered into scratch_.
  Status Gather(const uint8_t* local, uint64_t local_bytes, uint64_t payload, uint32_t first,
                uint32_t page);
  // Decodes one record into the sink's next row; stopped_ when the sink stops the scan.
  Status Decode(const uint8_t* record, uint64_t size, uint32_t page);

  const SqlitePages& pages_;
  const SqlitePagePlan& plan_;
  SqlitePageSink& sink_;
  const uint32_t usable_;
  std::vector<uint64_t> visited_;
  std::vector<uint64_t> types_, offsets_;
  std::vector<uint8_t> scratch_;
  bool stopped_ = false;  // the sink asked for no more rows
};

Status TableWalk::Enter(uint32_t number, Frame* frame) {
  if (!Visit(number)) return Corrupt("a b-tree page out of range or reached twice", number);
  const uint8_t* page = pages_.page(number);
  const uint32_t header = number == 1 ? 100 : 0;
  const uint8_t type = page[header];
  if (type != kLeafTablePage && type != kInteriorTablePage) {
    return Corrupt(fmt::format("page type {} in a table b-tree", type), number);
  }
  const bool leaf = type == kLeafTablePage;
  const uint32_t cells = Get16(page + header + 3);
  const uint32_t pointers = header + (leaf ? 8 : 12);
  if (pointers + 2 * cells > usable_) return Corrupt("more cells than the page holds", number);
  *frame = Frame{page, number, header, cells, 0, leaf};
  return Status::Ok();
}

Status TableWalk::Run() {
  Frame stack[kMaxBtreeDepth];
  int depth = 0;
  RETURN_IF_ERROR(Enter(plan_.root, &stack[depth++]));
  while (depth > 0 && !stopped_) {
    Frame& f = stack[depth - 1];
    if (f.leaf) {
      RETURN_IF_ERROR(ReadLeaf(f));
      --depth;
      continue;
    }
    if (f.next > f.cells) {
      --depth;
      continue;
    }
    uint32_t child;
    if (f.next < f.cells) {
      const uint32_t at = Get16(f.page + f.header + 12 + 2 * f.next);
      if (at < f.header + 12 + 2 * f.cells || at + 4 > usable_) {
        return Corrupt("a cell outside its page", f.number);
      }
      child = Get32(f.page + at);
    } else {
      child = Get32(f.page + f.header + 8);  // the right-most pointer
    }
    ++f.next;
    if (depth == kMaxBtreeDepth) return Corrupt("a b-tree deeper than SQLite allows", f.number);
    RETURN_IF_ERROR(Enter(child, &stack[depth++]));
  }
  return Status::Ok();
}

Status TableWalk::ReadLeaf(const Frame& f) {
  const uint8_t* end = f.page + usable_;
  const uint32_t first_cell = f.header + 8 + 2 * f.cells;
  // The largest payload kept whole on a leaf page, and the least kept when it spills (2.3.1.2).
  const uint64_t max_local = usable_ - 35;
  const uint64_t min_local = (uint64_t{usable_} - 12) * 32 / 255 - 23;
  for (uint32_t i = 0; i < f.cells; ++i) {
    const uint32_t at = Get16(f.page + f.header + 8 + 2 * i);
    if (at < first_cell || at >= usable_) return Corrupt("a cell outside its page", f.number);
    const uint8_t* p = f.page + at;
    uint64_t payload = 0, rowid = 0;
    int n = GetVarint(p, end, &payload);
    if (n == 0) return Corrupt("a cell outside its page", f.number);
    p += n;
    n = GetVarint(p, end, &rowid);
    if (n == 0) return Corrupt("a cell outside its page", f.number);
    p += n;
    if (payload <= max_local) {
      if (payload > static_cast<uint64_t>(end - p)) {
        return Corrupt("a cell outside its page", f.number);
      }
      RETURN_IF_ERROR(Decode(p, payload, f.number));
    } else {
      uint64_t local = min_local + (payload - min_local) % (usable_ - 4);
      if (local > max_local) local = min_local;
      if (local + 4 > static_cast<uint64_t>(end - p)) {
        return Corrupt("a cell outside its page", f.number);
      }
      RETURN_IF_ERROR(Gather(p, local, payload, Get32(p + local), f.number));
      RETURN_IF_ERROR(Decode(scratch_.data(), payload, f.number));
    }
    if (stopped_) return Status::Ok();
  }
  return Status::Ok();
}

Status TableWalk::Gather(const uint8_t* local, uint64_t local_bytes, uint64_t payload,
                         uint32_t first, uint32_t page) {
  // Grown page by page (never to the size a cell claims): each overflow page is visited once, so
  // what is gathered is bounded by the file.
  scratch_.assign(local, local + local_bytes);
  uint64_t left = payload - local_bytes;
  uint32_t next = first;
  while (left > 0) {
    if (!Visit(next)) return Corrupt("an overflow page out of range or reached twice", page);
    const uint8_t* o = pages_.page(next);
    const uint64_t take = std::min<uint64_t>(left, usable_ - 4);
    scratch_.insert(scratch_.end(), o + 4, o + 4 + take);
    left -= take;
    next = Get32(o);
  }
  return Status::Ok();
}

Status TableWalk::Decode(const uint8_t* record, uint64_t size, uint32_t page) {
  uint64_t header = 0;
  const int n = GetVarint(record, record + size, &header);
  if (n == 0 || header < static_cast<uint64_t>(n) || header > size) {
    return Corrupt("a record header longer than its record", page);
  }
  const uint8_t* h = record + n;
  const uint8_t* header_end = record + header;
  uint64_t offset = header;
  for (int c = 0; c < plan_.record_columns; ++c) {
    if (h >= header_end) {
      types_[c] = 0;  // a column added after the row was written: NULL (no column has a default)
      continue;
    }
    uint64_t t = 0;
    const int m = GetVarint(h, header_end, &t);
    if (m == 0) return Corrupt("a record header longer than its record", page);
    h += m;
    const uint64_t bytes = SerialSize(t);
    if (bytes > size - offset) return Corrupt("a value past the end of its record", page);
    types_[c] = t;
    offsets_[c] = offset;
    offset += bytes;
  }
  int64_t* values = sink_.NextRow();
  for (size_t i = 0; i < plan_.columns.size(); ++i) {
    const SqlitePageColumn& col = plan_.columns[i];
    const uint64_t t = col.index < 0 ? 0 : types_[col.index];
    if (t >= 1 && t <= 6) {
      values[i] = SerialInt(t, record + offsets_[col.index]);
    } else if (t == 8 || t == 9) {
      values[i] = static_cast<int64_t>(t - 8);
    } else if ((t == 0 || t == 10 || t == 11) && col.null_as) {  // 10, 11: NULL to SQLite
      values[i] = *col.null_as;
    } else {
      sink_.WrongType();
      return Status::Ok();
    }
  }
  stopped_ = !sink_.Commit();
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<SqlitePages>> SqlitePages::Open(const SqliteDb& db) {
  std::unique_ptr<SqlitePages> pages(new SqlitePages());
  pages->path_ = db.path();
  size_t bytes = 0;
  if (const std::string* image = db.image(); image != nullptr) {
    pages->bytes_ = reinterpret_cast<const uint8_t*>(image->data());
    bytes = image->size();
  } else {
    const int fd = ::open(db.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return UnimplementedError("cannot open the file for mapping");
    struct stat st;
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
      ::close(fd);
      return UnimplementedError("cannot map an empty file");
    }
    bytes = static_cast<size_t>(st.st_size);
    void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) return UnimplementedError("cannot map the file");
    pages->map_ = map;
    pages->map_bytes_ = bytes;
    pages->bytes_ = static_cast<const uint8_t*>(map);
  }
  const uint8_t* h = pages->bytes_;
  if (bytes < 100 || std::memcmp(h, "SQLite format 3", 16) != 0) {
    return UnimplementedError("no SQLite header");
  }
  const uint32_t page_size = Get16(h + 16) == 1 ? 65536 : Get16(h + 16);
  if (page_size < 512 || (page_size & (page_size - 1)) != 0 || h[20] > page_size - 480) {
    return UnimplementedError("a page size SQLite does not write");
  }
  uint64_t count = bytes / page_size;
  // The size in the header holds when written by a version that keeps it (1.3.7).
  const uint32_t in_header = Get32(h + 28);
  if (in_header != 0 && Get32(h + 92) == Get32(h + 24))
    count = std::min<uint64_t>(count, in_header);
  if (count == 0 || count > UINT32_MAX) return UnimplementedError("an unusual page count");
  pages->page_size_ = page_size;
  pages->usable_size_ = page_size - h[20];
  pages->page_count_ = static_cast<uint32_t>(count);
  return pages;
}

SqlitePages::~SqlitePages() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
}

StatusOr<SqlitePagePlan> PlanSqlitePageScan(SqliteDb& db, const std::string& table,
                                            std::span<const std::string> chosen,
                                            std::span<const char* const> null_as) {
  SqlitePagePlan plan;
  {
    ASSIGN_OR_RETURN(SqliteStatement stmt,
                     db.Prepare(fmt::format("PRAGMA main.table_list({})", QuoteString(table))));
    int rows = 0;
    while (stmt.Step()) {  // schema, name, type, ncol, wr, strict
      ++rows;
      if (stmt.Text(2) != "table" || stmt.Int64(4) != 0) {
        return NotByPages(table, "not a plain rowid table");
      }
    }
    RETURN_IF_ERROR(stmt.status());
    if (rows != 1) return NotByPages(table, "not one table of that name");
  }
  {
    ASSIGN_OR_RETURN(
        SqliteStatement stmt,
        db.Prepare(fmt::format("SELECT rootpage FROM main.sqlite_schema WHERE type = 'table' "
                               "AND name = {} COLLATE NOCASE",
                               QuoteString(table))));
    int rows = 0;
    while (stmt.Step()) {
      ++rows;
      const int64_t root = stmt.Int64Or(0, 0);
      if (root < 1 || root > UINT32_MAX) return NotByPages(table, "no root page");
      plan.root = static_cast<uint32_t>(root);
    }
    RETURN_IF_ERROR(stmt.status());
    if (rows != 1) return NotByPages(table, "not one schema row");
  }
  struct Info {
    std::string name;
    bool plain;  // not the rowid, no default, no REAL affinity
  };
  std::vector<Info> infos;
  {
    ASSIGN_OR_RETURN(SqliteStatement stmt, db.Prepare(fmt::format("PRAGMA main.table_xinfo({})",
                                                                  QuoteIdentifier(table))));
    while (stmt.Step()) {  // cid, name, type, notnull, dflt_value, pk, hidden
      if (stmt.Int64(6) != 0) return NotByPages(table, "hidden or generated columns");
      infos.push_back({std::string(stmt.Text(1)),
                       stmt.IsNull(4) && stmt.Int64(5) == 0 && !HasRealAffinity(stmt.Text(2))});
    }
    RETURN_IF_ERROR(stmt.status());
  }
  for (size_t i = 0; i < chosen.size(); ++i) {
    SqlitePageColumn col;
    if (null_as[i] != nullptr) {
      const std::string_view literal = null_as[i];
      int64_t v = 0;
      const auto r = std::from_chars(literal.data(), literal.data() + literal.size(), v);
      if (r.ec != std::errc() || r.ptr != literal.data() + literal.size()) {
        return NotByPages(table, "a constant that is not an integer");
      }
      col.null_as = v;
    }
    if (!chosen[i].empty()) {
      auto it = std::find_if(infos.begin(), infos.end(),
                             [&](const Info& info) { return info.name == chosen[i]; });
      if (it == infos.end()) return NotByPages(table, "a column not in the table");
      if (!it->plain) return NotByPages(table, fmt::format("column {}", chosen[i]));
      col.index = static_cast<int>(it - infos.begin());
      plan.record_columns = std::max(plan.record_columns, col.index + 1);
    }
    plan.columns.push_back(col);
  }
  return plan;
}

Status ScanSqlitePages(const SqlitePages& pages, const SqlitePagePlan& plan, SqlitePageSink& sink) {
  return TableWalk(pages, plan, sink).Run();
}

bool SqlitePageScansEnabled() {
  const char* env = std::getenv("SIGHTLINE_NSYS_PAGES");
  return env == nullptr || std::string_view(env) != "0";
}

}  // namespace sightline
