// Lines of a file descriptor (standard input) read with read(2), so that whether more input
// is already waiting can be asked (poll) without blocking: std::cin buffers out of sight of
// poll. A streaming translator decodes a batch when it is full or when nothing more waits.
#ifndef ATTN_TASK_LINEREADER_H
#define ATTN_TASK_LINEREADER_H

#include <string>

namespace attn::task {

class LineReader {
public:
  /// The longest line read: a longer one (or input with no newline, such as /dev/zero) ends
  /// the reading, with overlong(), rather than growing the buffer without bound.
  static constexpr size_t kMaxLineBytes = 1 << 20;

  explicit LineReader(int fd = 0, size_t maxLineBytes = kMaxLineBytes)
      : fd(fd), maxLineBytes(maxLineBytes) {}
  /// The next line without its newline (nor a trailing '\r'); false at the end of input, on
  /// a read error (then failed()) or at a line over the limit (then overlong()).
  bool next(std::string &line);
  /// Whether another line can be had without waiting: one is buffered, or input is ready.
  bool waiting() const;
  bool failed() const { return readErrno != 0; }
  bool overlong() const { return tooLong; }
  size_t maxLine() const { return maxLineBytes; }
  std::string error() const;

private:
  int fd;
  size_t maxLineBytes;
  bool tooLong = false;
  std::string buffer;
  size_t start = 0;
  bool eof = false;
  int readErrno = 0;
};

} // namespace attn::task

#endif
