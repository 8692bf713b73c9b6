#include "attn/File.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace attn {

void writeFileAtomically(const std::string &path, const std::string &bytes) {
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), (std::streamsize)bytes.size());
    if (!out.flush())
      throw FileError(path, "cannot write '" + tmp + "': " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw FileError(path, "cannot rename '" + tmp + "' over it: " + why);
  }
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0)
    bytes /= 1024, ++u;
  return std::to_string(bytes) + " " + units[u];
}

uint64_t checkRegularFile(const std::string &path, uint64_t maxBytes, const char *what) {
  auto fail = [&](const std::string &why) { throw FileError(path, why); };
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    fail(std::string("cannot open file: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    fail(std::string("is a directory, not a ") + what);
  if (!S_ISREG(st.st_mode))
    fail(std::string("not a regular file (a device, FIFO or socket); the ") + what +
         " must be a regular file");
  if ((uint64_t)st.st_size > maxBytes)
    fail(std::string("the ") + what + " is " + formatBytes((uint64_t)st.st_size) +
         ", more than the limit of " + formatBytes(maxBytes));
  return (uint64_t)st.st_size;
}

std::string readRegularFile(const std::string &path, uint64_t maxBytes, const char *what) {
  checkRegularFile(path, maxBytes, what);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw FileError(path, std::string("cannot open ") + what + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw FileError(path, "read error");
  return text.str();
}

} // namespace attn
