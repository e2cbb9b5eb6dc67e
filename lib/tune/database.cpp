#include <isaac/error.hpp>
#include <isaac/tune/database.hpp>
#include <isaac/tune/models.hpp>

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <vector>

namespace isaac::tune {

namespace {

constexpr const char* schema = R"(
CREATE TABLE IF NOT EXISTS decisions (
  device TEXT NOT NULL, compute_capability INTEGER NOT NULL, sm_count INTEGER NOT NULL, driver INTEGER NOT NULL,
  isaac_version TEXT NOT NULL, template TEXT NOT NULL, dtype TEXT NOT NULL, layout TEXT NOT NULL, shape TEXT NOT NULL,
  params TEXT NOT NULL, measured_ms REAL NOT NULL, how TEXT NOT NULL, created TEXT NOT NULL,
  PRIMARY KEY (device, compute_capability, sm_count, driver, isaac_version, template, dtype, layout, shape));
)";
// The table's columns in order: store() and list() read and write them by position.
constexpr std::array<const char*, 13> columns{"device", "compute_capability", "sm_count", "driver", "isaac_version",
                                              "template", "dtype", "layout", "shape", "params", "measured_ms",
                                              "how", "created"};

// What to do about a file that is not a sound tuning database.
std::string advice(const std::string& path) {
  return fmt::format("delete {} (it holds only tuning decisions, which isaac makes again), or set ISAAC_TUNING_DB to "
                     "another file",
                     path);
}

// Whether SQLite's result code says that the file's content is at fault (not a lock, a permission, a
// full disk): a damaged page, or a file that is not a database at all.
bool content_error(int rc) {
  rc &= 0xff;  // the primary code of an extended one
  return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

[[noreturn]] void fail(sqlite3* db, const std::string& path, int rc, const std::string& what) {
  if (content_error(rc))
    throw DamagedDatabase(fmt::format("tuning database {}: {}: the file is damaged or not a tuning database; {}", path,
                                      what, advice(path)));
  throw Error(fmt::format("tuning database {}: {}", path, what));
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// A prepared statement, finalized on every path.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    if (const int rc = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); rc != SQLITE_OK) fail("prepare", rc);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, const std::string& v) { check(sqlite3_bind_text(stmt_, i, v.c_str(), -1, SQLITE_TRANSIENT)); }
  void bind(int i, int v) { check(sqlite3_bind_int(stmt_, i, v)); }
  void bind(int i, double v) { check(sqlite3_bind_double(stmt_, i, v)); }
  void bind_key(const DecisionKey& k) {
    bind(1, k.device), bind(2, k.compute_capability), bind(3, k.sm_count), bind(4, k.driver);
    bind(5, k.isaac_version), bind(6, k.template_name), bind(7, k.dtype), bind(8, k.layout), bind(9, k.shape);
  }
  // True while there is a row.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail("step", rc);
    return false;
  }
  std::string text(int i) const {
    const unsigned char* t = sqlite3_column_text(stmt_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  int integer(int i) const { return sqlite3_column_int(stmt_, i); }
  double real(int i) const { return sqlite3_column_double(stmt_, i); }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail("bind", rc);
  }
  [[noreturn]] void fail(const char* what, int rc) {
    isaac::tune::fail(db_, path_, rc, fmt::format("{} failed: {}", what, sqlite3_errmsg(db_)));
  }
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const std::string& path, const char* sql) {
  char* message = nullptr;
  if (const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message); rc != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    fail(db, path, rc, text);
  }
}

// CREATE TABLE IF NOT EXISTS keeps a "decisions" table of another form, and every later statement
// would fail on it with "no such column".
void check_columns(sqlite3* db, const std::string& path) {
  Statement s(db, path, "PRAGMA table_info(decisions)");
  std::vector<std::string> found;
  while (s.step()) found.push_back(s.text(1));
  if (std::equal(found.begin(), found.end(), columns.begin(), columns.end())) return;
  std::string theirs, ours;
  for (const std::string& name : found) theirs += (theirs.empty() ? "" : ", ") + name;
  for (const char* name : columns) ours += (ours.empty() ? "" : ", ") + std::string(name);
  throw DamagedDatabase(fmt::format("tuning database {}: its table \"decisions\" has the columns ({}) where this isaac "
                                    "needs ({}): it is not a tuning database of this version; {}",
                                    path, theirs, ours, advice(path)));
}

}  // namespace

TuningDatabase::TuningDatabase(const std::string& path) : path_(path) {
  std::error_code ec;
  const auto folder = std::filesystem::path(path).parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder, ec);
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(fmt::format("cannot open the tuning database {}: {} (set ISAAC_TUNING_DB to move it, or "
                            "ISAAC_NO_CACHE=1 to run without it)",
                            path, why));
  }
  try {
    sqlite3_busy_timeout(db_, 60000);
    exec(db_, path_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
    exec(db_, path_, schema);
    check_columns(db_, path_);
  } catch (const DamagedDatabase&) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  } catch (const Error& e) {  // a lock held too long, a read-only file: not the file's content
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(fmt::format("{} (set ISAAC_TUNING_DB to move the database, or ISAAC_NO_CACHE=1 to run without it)",
                            e.what()));
  }
}

TuningDatabase::TuningDatabase(TuningDatabase&& o) noexcept : db_(o.db_), path_(std::move(o.path_)) { o.db_ = nullptr; }
TuningDatabase& TuningDatabase::operator=(TuningDatabase&& o) noexcept {
  std::swap(db_, o.db_);
  std::swap(path_, o.path_);
  return *this;
}
TuningDatabase::~TuningDatabase() { sqlite3_close(db_); }

std::optional<Decision> TuningDatabase::find(const DecisionKey& key) const {
  Statement s(db_, path_,
              "SELECT params, measured_ms, how, created FROM decisions WHERE device=?1 AND compute_capability=?2 AND "
              "sm_count=?3 AND driver=?4 AND isaac_version=?5 AND template=?6 AND dtype=?7 AND layout=?8 AND shape=?9");
  s.bind_key(key);
  if (!s.step()) return std::nullopt;
  return Decision{s.text(0), s.real(1), s.text(2), s.text(3)};
}

void TuningDatabase::store(const DecisionKey& key, Decision d) {
  if (d.created.empty()) d.created = utc_now();
  Statement s(db_, path_,
              "INSERT OR REPLACE INTO decisions VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  s.bind_key(key);
  s.bind(10, d.params), s.bind(11, d.measured_ms), s.bind(12, d.how), s.bind(13, d.created);
  s.step();
}

void TuningDatabase::store_all(const std::vector<std::pair<DecisionKey, Decision>>& decisions) {
  exec(db_, path_, "BEGIN IMMEDIATE");
  try {
    for (const auto& [key, decision] : decisions) store(key, decision);
    exec(db_, path_, "COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);  // keeps the first error, not this one's
    throw;
  }
}

std::vector<std::pair<DecisionKey, Decision>> TuningDatabase::list() const {
  Statement s(db_, path_, "SELECT * FROM decisions ORDER BY template, dtype, layout, shape");
  std::vector<std::pair<DecisionKey, Decision>> out;
  while (s.step())
    out.push_back({DecisionKey{s.text(0), s.integer(1), s.integer(2), s.integer(3), s.text(4), s.text(5), s.text(6),
                               s.text(7), s.text(8)},
                   Decision{s.text(9), s.real(10), s.text(11), s.text(12)}});
  return out;
}

std::size_t TuningDatabase::erase_all() {
  std::size_t n = list().size();
  exec(db_, path_, "DELETE FROM decisions");
  return n;
}

std::string tuning_database_path() {
  const char* env = std::getenv("ISAAC_TUNING_DB");
  if (env && *env) return env;
  return cache_directory() + "/tuning.sqlite";
}

bool caches_enabled() {
  const char* env = std::getenv("ISAAC_NO_CACHE");
  return !env || !*env || std::string(env) == "0";
}

}  // namespace isaac::tune
