#include "files.hpp"

#include <isaac/error.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace isaac::tune::cli {

void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InvalidArgument("no file name given: name the file to write");
  const fs::path target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw InvalidArgument(fmt::format("{} is a directory: name a file to write", path));
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec))
    throw InvalidArgument(fmt::format("cannot write {}: the folder {} does not exist (create it first)", path,
                                      folder.string()));
}

void write_file_atomically(const std::string& path, const std::string& text) {
  check_output_path(path);
  const std::string temporary = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  int error = 0;
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  // A full disk may only show at fsync or close (delayed allocation, network file systems).
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    throw Error(fmt::format("cannot write {}: {}", path, std::strerror(error)));
  }
}

}  // namespace isaac::tune::cli
