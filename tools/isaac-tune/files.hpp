#pragma once
// Files that isaac-tune writes whole (exported headers and decisions, predictions).
#include <string>

namespace isaac::tune::cli {

// Writes `text` to `path` through a temporary file beside it, flushed to disk and renamed over it: a
// reader, a crash or a full disk leaves the old file or the new one, never part of one, and no
// temporary file behind. Refuses an empty path, a directory, and a path whose folder does not exist
// (it creates no folder). Throws isaac::InvalidArgument for such a path, isaac::Error when writing
// fails; both name `path`.
void write_file_atomically(const std::string& path, const std::string& text);

// The checks of write_file_atomically on the path alone, for commands that would otherwise work for
// minutes before they find out that they cannot write their result.
void check_output_path(const std::string& path);

}  // namespace isaac::tune::cli
