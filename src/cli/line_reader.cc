#include "cli/line_reader.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace vsc::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

LineReader::LineReader(int fd) : fd_(fd) {
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read() returns EINTR
  ::sigaction(SIGINT, &sa, &old_);
  g_interrupted.store(false);
}

LineReader::~LineReader() { ::sigaction(SIGINT, &old_, nullptr); }

bool LineReader::TakeInterrupt() { return g_interrupted.exchange(false); }

LineReader::Event LineReader::Next(std::string& line) {
  for (;;) {
    // What the terminal held of the line is gone already (canonical mode discards it at
    // Ctrl-C); what is buffered here came after the interrupt, so it stays.
    if (TakeInterrupt()) return Event::kInterrupted;
    if (const size_t nl = buf_.find('\n'); nl != std::string::npos) {
      line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return Event::kLine;
    }
    if (eof_) {
      if (buf_.empty()) return Event::kEnd;
      line = std::move(buf_);
      buf_.clear();
      return Event::kLine;
    }
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
    if (n > 0) {
      buf_.append(chunk, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      eof_ = true;  // end of input, or it cannot be read any more
    }
  }
}

}  // namespace vsc::cli
