// What the train-step benchmarks share: timing statistics and the PyTorch side, a Python child
// process driven line by line over two pipes (tests/bench/bench_io.py speaks the protocol).
#pragma once

#include "attn/Tensor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

// Prints "<program>: error: <what>" and exits 1.
[[noreturn]] inline void die(const char *program, const std::string &what) {
  std::fprintf(stderr, "%s: error: %s\n", program, what.c_str());
  std::exit(1);
}

inline double seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "(min A, max B over N reps)" of times in seconds, shown times `scale` (1e3: ms, 1e6: us)
// with `decimals` digits.
inline std::string spread(std::vector<double> v, double scale, int decimals) {
  std::sort(v.begin(), v.end());
  char buf[96];
  std::snprintf(buf, sizeof buf, "(min %.*f, max %.*f over %zu reps)", decimals,
                v.front() * scale, decimals, v.back() * scale, v.size());
  return buf;
}

inline attn::Tensor scalar(float v) { return attn::Tensor::f32({}, {v}); }

// The PyTorch side: a child process driven line by line over two pipes.
class PyTorchSide {
public:
  bool start(const std::vector<std::string> &argv) {
    int toChild[2], fromChild[2];
    if (pipe(toChild) || pipe(fromChild))
      return false;
    pid = fork();
    if (pid < 0)
      return false;
    if (pid == 0) {
      dup2(toChild[0], 0);
      dup2(fromChild[1], 1);
      close(toChild[0]), close(toChild[1]), close(fromChild[0]), close(fromChild[1]);
      std::vector<char *> args;
      for (const std::string &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      std::printf("error: cannot run %s: %s\n", args[0], std::strerror(errno));
      std::fflush(stdout);
      _exit(127);
    }
    close(toChild[0]), close(fromChild[1]);
    in = fdopen(toChild[1], "w");
    out = fdopen(fromChild[0], "r");
    return in && out;
  }
  // One line of the child's stdout, without the newline; "" at end of file.
  std::string readLine() {
    char *line = nullptr;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, out);
    std::string s = n > 0 ? std::string(line, n) : std::string();
    std::free(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
      s.pop_back();
    return s;
  }
  void send(const char *command) {
    std::fprintf(in, "%s\n", command);
    std::fflush(in);
  }
  int finish() {
    if (in)
      std::fclose(in);
    if (out)
      std::fclose(out);
    in = out = nullptr;
    int status = 0;
    if (pid > 0)
      waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  }

private:
  pid_t pid = -1;
  std::FILE *in = nullptr, *out = nullptr;
};

} // namespace bench
