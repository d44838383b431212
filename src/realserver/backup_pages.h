// BackupPages: a real server's answer to a backup ReadRequest on its TCP read path (sql-tcp),
// for the director's GET /db/backup (DESIGN §9a). A consistent copy of the replica database is
// made with replication::Snapshot (SQLite's online backup API, from one read snapshot) into a
// temporary file next to it, then sent as pages of at most `chunk_bytes` of that file each
// (ReadResponse.file_chunk; `more` on all but the last; file_size on every page), each page
// naming the seq the copy holds (applied_seq), read from the file as each is asked for. The
// temporary file is removed when the source is destroyed.
//
// Errors are one ok=false page: the copy failed; it holds a seq below the request's min_seq
// ("not yet applied: ...", so the director tries another replica); or the file is larger than
// the request's max_bytes (capped by `max_bytes`). Pages emitted before a late error must be
// discarded by the receiver, as for query pages.
//
// Thread: the caller's (a worker); BackupPages blocks while SQLite copies the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "proto/control.pb.h"
#include "realserver/page_source.h"

namespace vsc::realserver {

std::unique_ptr<PageSource> BackupPages(const std::string& db_path,
                                        const proto::ReadRequest& request,
                                        const std::string& replica_id, size_t chunk_bytes,
                                        uint64_t max_bytes);

}  // namespace vsc::realserver
