#pragma once
// The tuning database (DESIGN.md, "Tuning"): which parameters were chosen for a problem on a device,
// so that the second run of a program tunes nothing. SQLite in WAL mode under the cache directory:
// many processes may read and write at once (writers wait for each other, up to 60 s), and a process
// killed in the middle of a write leaves the previous state, never a damaged file.
//
// Key: the device (name, compute capability, SM count), the driver version, isaac's version, the
// template, the dtype, the layout, and the shape (exact, or a bucket of shapes). Value: the
// parameters (the template's text form), the measured time, how they were chosen, and when.
#include <isaac/error.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace isaac::tune {

struct DecisionKey {
  std::string device;
  int compute_capability = 0, sm_count = 0, driver = 0;
  std::string isaac_version, template_name, dtype, layout, shape;
  bool operator==(const DecisionKey&) const = default;
};

struct Decision {
  std::string params;
  double measured_ms = -1;  // -1 when nothing was timed
  std::string how;
  std::string created;  // UTC, ISO 8601; set by store() when empty
};

// The file is not a tuning database that this isaac can use: not SQLite, damaged, or with a
// "decisions" table of another form. Its message names the file and says to delete it (it holds only
// decisions that tuning makes again).
struct DamagedDatabase : Error {
  using Error::Error;
};

class TuningDatabase {
 public:
  // Opens (creating it and its folder if needed) the database at `path`. Throws DamagedDatabase when
  // the file is not a tuning database, isaac::Error naming the file and SQLite's message when it
  // cannot open it for another reason. find, store, list and erase_all throw DamagedDatabase too when
  // they meet a damaged page.
  explicit TuningDatabase(const std::string& path);
  TuningDatabase(TuningDatabase&&) noexcept;
  TuningDatabase& operator=(TuningDatabase&&) noexcept;
  ~TuningDatabase();

  std::optional<Decision> find(const DecisionKey& key) const;
  void store(const DecisionKey& key, Decision decision);  // replaces an earlier decision for the key
  // Stores every decision or, when one fails, none: one transaction.
  void store_all(const std::vector<std::pair<DecisionKey, Decision>>& decisions);
  std::vector<std::pair<DecisionKey, Decision>> list() const;
  std::size_t erase_all();  // returns how many decisions there were
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// $ISAAC_TUNING_DB, else <cache directory>/tuning.sqlite.
std::string tuning_database_path();
// False when ISAAC_NO_CACHE is set to anything but 0 or empty: nothing is read from or written to
// the tuning database or the kernel cache.
bool caches_enabled();

}  // namespace isaac::tune
