// LineReader: the lines of the interactive `vsc sql` shell, read with read(2) from a file
// descriptor (stdin), with Ctrl-C as an event rather than the end of the process.
//
// While a LineReader lives, SIGINT only sets a flag (its handler is installed without
// SA_RESTART, so a read blocked on the terminal returns EINTR at once): Next() then answers
// kInterrupted (a terminal in canonical mode has already discarded the characters typed on the
// line; the caller drops the unfinished statement), and a long operation may poll
// TakeInterrupt() to stop early. The previous SIGINT disposition comes back at destruction.
// Ctrl-D on an empty line (read returns 0) is kEnd.
//
// A plain reader, not libedit or readline: no new dependency, and Ctrl-C, Ctrl-D and piped
// input behave the same whatever the terminal library would do; the terminal's own line
// editing (erase, kill, word erase) still works in canonical mode.
//
// Thread: the main thread only (one LineReader at a time: the flag is process-wide).
#pragma once

#include <signal.h>

#include <string>

namespace vsc::cli {

class LineReader {
 public:
  enum class Event { kLine, kInterrupted, kEnd };

  explicit LineReader(int fd);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its '\n' (a last line without one is a line too).
  Event Next(std::string& line);

  // True once per SIGINT received since the last call (and since the last kInterrupted).
  static bool TakeInterrupt();

 private:
  int fd_;
  std::string buf_;
  bool eof_ = false;
  struct sigaction old_ {};
};

}  // namespace vsc::cli
