#include "attn/task/LineReader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attn::task {

bool LineReader::next(std::string &line) {
  if (tooLong)
    return false;
  while (true) {
    size_t eol = buffer.find('\n', start);
    size_t length = (eol == std::string::npos ? buffer.size() : eol) - start;
    if (length > maxLineBytes) {
      tooLong = true;
      buffer.clear();
      return false;
    }
    if (eol != std::string::npos) {
      line.assign(buffer, start, eol - start);
      start = eol + 1;
      break;
    }
    if (eof) { // a last line without a newline
      if (start == buffer.size())
        return false;
      line.assign(buffer, start, std::string::npos);
      start = buffer.size();
      break;
    }
    buffer.erase(0, start);
    start = 0;
    char chunk[65536];
    ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      readErrno = errno;
    if (got <= 0)
      eof = true;
    else
      buffer.append(chunk, (size_t)got);
  }
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  return true;
}

bool LineReader::waiting() const {
  if (buffer.find('\n', start) != std::string::npos || eof)
    return true;
  struct pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

std::string LineReader::error() const { return std::strerror(readErrno); }

} // namespace attn::task
