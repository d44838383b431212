// PageSource: one answer of a real server's TCP read path (sql-tcp, realserver/sql_service.h),
// made a page at a time. The session asks for the next page only once the previous one has been
// written to the socket, so a slow reader holds one page in the replica's memory, not its whole
// answer, and a large result is sent while the query is still running.
//
// Thread: the worker that made it; it borrows that worker's resources (a read connection), so it
// must be destroyed before them.
#pragma once

#include <optional>
#include <utility>

#include "proto/control.pb.h"

namespace vsc::realserver {

class PageSource {
 public:
  virtual ~PageSource() = default;
  // The next page of the answer; nullopt once the last one was returned (the page with
  // more=false, or an ok=false error, which ends every answer it occurs in).
  virtual std::optional<proto::ReadResponse> Next() = 0;
};

// An answer of one page (an error, mostly).
class SinglePage : public PageSource {
 public:
  explicit SinglePage(proto::ReadResponse page) : page_(std::move(page)) {}
  std::optional<proto::ReadResponse> Next() override {
    auto page = std::move(page_);
    page_.reset();
    return page;
  }

 private:
  std::optional<proto::ReadResponse> page_;
};

}  // namespace vsc::realserver
