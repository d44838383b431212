// SnapshotServer: serves `GET /v1/snapshot` (snapshot.h) from its own thread, so that a copy of
// the whole database never holds up a lookup worker nor sits in memory.
//
// The lookup worker's HTTP handler (Handle) refuses what may not have a snapshot and otherwise
// hands the connection over (net::HttpResponse::hand_over). This thread then makes the copy
// (SnapshotCopy: SQLite's backup into a temporary file, hashed in kSnapshotChunk pieces), writes
// the head and sends the file with sendfile(2): the body never passes through user memory.
// Answers are made one at a time; up to kMaxWaiting more connections wait, beyond that the
// worker answers 503 at once. Each send is bounded by `send_timeout`: a reader that stops
// reading loses its connection instead of holding the thread.
//
// Threads: Handle runs on any lookup worker; the rest on the owner's thread. Start before the
// workers serve HTTP; Stop (also the destructor) after they stopped handing connections over:
// it closes the waiting connections, cuts the one being served and joins the thread. A
// connection handed over after Stop is closed at once.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "net/http_parser.h"
#include "net/http_response.h"

namespace vsc::realserver {

class SnapshotServer {
 public:
  static constexpr size_t kMaxWaiting = 4;

  SnapshotServer(std::string db_path, std::string token, Duration send_timeout);
  ~SnapshotServer();
  SnapshotServer(const SnapshotServer&) = delete;
  SnapshotServer& operator=(const SnapshotServer&) = delete;

  void Start();
  void Stop();
  // The HTTP handler for GET /v1/snapshot.
  net::HttpResponse Handle(const net::HttpRequest& request);
  uint64_t served() const;  // answers sent in full
  bool serving() const;     // an answer is being made or sent now

 private:
  void Accept(int fd);
  void Run();
  void Serve(int fd);

  const std::string db_path_;
  const std::string token_;
  const Duration send_timeout_;
  std::thread thread_;
  mutable std::mutex mu_;  // guards the fields below
  std::condition_variable cv_;
  std::deque<int> waiting_;
  int serving_ = -1;  // the connection being answered, cut by Stop
  bool started_ = false;
  bool stopping_ = false;
  uint64_t served_ = 0;
};

}  // namespace vsc::realserver
