#pragma once
// Just enough CSV: quoted fields (GEMM parameter strings contain commas), '#' comment lines, and files
// written whole through a temporary name so that a killed run never leaves half a file.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isaac::bench {

// The field as CSV needs it: quoted (with doubled quotes) when it holds a comma, a quote or a newline.
std::string csv_field(std::string_view text);
// Splits one line into fields, undoing csv_field's quoting.
std::vector<std::string> split_csv_line(std::string_view line);

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> line_numbers;  // of each row in the file, for error messages
  std::string path;
  // The column's index; throws BenchError naming the file and the columns it has.
  std::size_t column(const std::string& name) const;
  // The same for a column that may be absent.
  std::optional<std::size_t> find_column(const std::string& name) const;
};

// Reads a CSV whose first non-comment line is the header. Throws BenchError when it cannot be read or
// a row has a different number of fields than the header.
CsvTable read_csv(const std::string& path);
CsvTable parse_csv(const std::string& text, const std::string& path_for_errors);

// Writes `content` to `path` (creating its folder), through `path`.tmp and a rename.
void write_file(const std::string& path, const std::string& content);
// Appends to `path` (creating its folder); writes `header` first when the file is new or empty.
void append_file(const std::string& path, const std::string& header, const std::string& content);

}  // namespace isaac::bench
