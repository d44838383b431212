#include "realserver/sql_service.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <thread>

#include "client/sql_client.h"
#include "common/unique_fd.h"
#include "proto/frame.h"
#include "proto/lookup_codec.h"
#include "store/database.h"
#include "support/temp_dir.h"

namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

proto::ClusterKey Key(uint8_t fill) {
  std::array<uint8_t, 32> b;
  b.fill(fill);
  return proto::ClusterKey::FromBytes(b);
}

int UdpSocket(uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

// One worker running a SqlService on a small replica database.
class SqlServiceTest : public ::testing::Test {
 protected:
  void Start(const std::vector<uint32_t>& trusted_v4) {
    std::vector<asio::ip::address> trusted;
    for (uint32_t a : trusted_v4) trusted.push_back(asio::ip::address_v4(a));
    path_ = dir_.File("r.db");
    {
      auto db = store::Database::Open(path_);
      ASSERT_TRUE(db.ok());
      ASSERT_TRUE(db->Exec("CREATE TABLE resources(id INTEGER PRIMARY KEY, node TEXT NOT NULL);"
                           "INSERT INTO resources VALUES(1, 'a'), (2, 'b');"
                           "CREATE TABLE _vsc_replica(id INTEGER PRIMARY KEY, epoch, applied_seq, "
                           "digest BLOB); INSERT INTO _vsc_replica VALUES(0, 1, 5, NULL);")
                      .ok());
    }
    service_ = std::make_unique<SqlService>(io_, "rs9", key_, std::move(trusted), path_, 1000);
    ASSERT_TRUE(service_->Start(asio::ip::make_address_v4("127.0.0.1"), 0, 0).ok());
    ASSERT_TRUE(service_->ReopenReader().ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (thread_.joinable()) {
      asio::post(io_, [this] { service_->Stop(); });
      guard_.reset();
      io_.stop();
      thread_.join();
    }
  }

  // Sends `payload` from a fresh socket and returns what arrives on `listen_fd` (empty: nothing
  // within 300 ms).
  std::vector<uint8_t> Exchange(const std::vector<uint8_t>& payload, int send_fd, int listen_fd) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(service_->port());
    ::sendto(send_fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to),
             sizeof(to));
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 300) <= 0) return {};
    std::vector<uint8_t> buf(65536);
    const ssize_t n = ::recv(listen_fd, buf.data(), buf.size(), 0);
    buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return buf;
  }

  std::vector<uint8_t> SealedRead(const proto::ClusterKey& key, const std::string& sql) {
    proto::Message m;
    m.mutable_read_request()->set_request_id(77);
    m.mutable_read_request()->mutable_statement()->set_sql(sql);
    return proto::Seal(key, "client", 1, m);
  }

  test_support::TempDir dir_;
  std::string path_;
  proto::ClusterKey key_ = Key(1);
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{io_.get_executor()};
  std::unique_ptr<SqlService> service_;
  std::thread thread_;
};

TEST_F(SqlServiceTest, AnswersTheReadClientDirectly) {
  Start({0x7f000001});
  auto c = client::ReadClient::Open("127.0.0.1", service_->port(), key_, 2s, 0);
  ASSERT_TRUE(c.ok());
  auto r = c->Query(client::MakeStatement("SELECT node FROM resources ORDER BY id"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->ok()) << r->error();
  EXPECT_EQ(r->replica_id(), "rs9");
  EXPECT_EQ(r->applied_seq(), 5u);
  ASSERT_EQ(r->rows_size(), 2);
  EXPECT_EQ(r->rows(1).values(0).text(), "b");
  r = c->Query(client::MakeStatement("SELECT 1"), 6);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok());
  EXPECT_NE(r->error().find("not yet applied: at seq 5, need 6"), std::string::npos);
  r = c->Query(client::MakeStatement("DELETE FROM resources"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok());
}

TEST_F(SqlServiceTest, AnswersTheClientNamedByATrustedForwarder) {
  Start({0x7f000001});
  uint16_t client_port = 0, director_port = 0;
  const int client_fd = UdpSocket(&client_port);
  const int director_fd = UdpSocket(&director_port);
  proto::ForwardHeader h;
  h.client_ip = 0x7f000001;
  h.client_port = client_port;
  std::vector<uint8_t> d(proto::kForwardHeaderSize);
  proto::EncodeForwardHeader(h, std::span<uint8_t, proto::kForwardHeaderSize>(d.data(), d.size()));
  const auto req = SealedRead(key_, "SELECT count(*) FROM resources");
  d.insert(d.end(), req.begin(), req.end());
  // Sent by the "director", answered to the client.
  auto answer = Exchange(d, director_fd, client_fd);
  ASSERT_FALSE(answer.empty());
  auto opened = proto::Open(key_, answer);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->sender, "rs9");
  EXPECT_EQ(opened->message.read_response().request_id(), 77u);
  EXPECT_EQ(opened->message.read_response().rows(0).values(0).integer(), 2);
  // Unauthenticated and malformed datagrams are never answered.
  EXPECT_TRUE(Exchange(SealedRead(Key(2), "SELECT 1"), client_fd, client_fd).empty());
  EXPECT_TRUE(Exchange({1, 2, 3}, client_fd, client_fd).empty());
  ::close(client_fd);
  ::close(director_fd);
}

TEST_F(SqlServiceTest, IgnoresForwardHeadersFromUntrustedAddresses) {
  Start({0x0a000001});  // only 10.0.0.1 may forward
  uint16_t client_port = 0, victim_port = 0;
  const int client_fd = UdpSocket(&client_port);
  const int victim_fd = UdpSocket(&victim_port);
  proto::ForwardHeader h;
  h.client_ip = 0x7f000001;
  h.client_port = victim_port;
  std::vector<uint8_t> d(proto::kForwardHeaderSize);
  proto::EncodeForwardHeader(h, std::span<uint8_t, proto::kForwardHeaderSize>(d.data(), d.size()));
  const auto req = SealedRead(key_, "SELECT 1");
  d.insert(d.end(), req.begin(), req.end());
  EXPECT_TRUE(Exchange(d, client_fd, victim_fd).empty());
  // Without a forward header the same request is answered to its sender.
  EXPECT_FALSE(Exchange(req, client_fd, client_fd).empty());
  ::close(client_fd);
  ::close(victim_fd);
}

}  // namespace
}  // namespace vsc::realserver

namespace vsc::realserver {
namespace {

// The TCP read path: one connection, a sealed ReadRequest in a frame, the answer's pages back.
class SqlTcpPathTest : public SqlServiceTest {
 protected:
  void Fill(int rows) {
    auto db = store::Database::Open(path_);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        db->Exec("CREATE TABLE big(id INTEGER PRIMARY KEY, s VARCHAR(20));"
                 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " +
                 std::to_string(rows) + ") INSERT INTO big SELECT x, 'row ' || x FROM c;")
            .ok());
  }

  // One connection to the TCP read path, read a page at a time.
  class Connection {
   public:
    // `rcvbuf` > 0 shrinks the receive buffer (a slow reader).
    Connection(uint16_t port, const proto::ClusterKey& key, int rcvbuf = 0)
        : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), codec_(key), key_(key) {
      if (rcvbuf > 0) ::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      to.sin_port = htons(port);
      EXPECT_EQ(::connect(fd_.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
      timeval tv{5, 0};
      ::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    void Send(proto::ReadRequest req) {
      proto::Message m;
      *m.mutable_read_request() = std::move(req);
      std::vector<uint8_t> frame;
      proto::AppendFrame(frame, proto::Seal(key_, "director", ++counter_, m));
      EXPECT_EQ(::send(fd_.get(), frame.data(), frame.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(frame.size()));
    }
    // The next page; nullopt at a close, a timeout or a frame that does not open.
    std::optional<proto::ReadResponse> Next() {
      for (;;) {
        auto next = decoder_.Next();
        if (!next.ok()) return std::nullopt;
        if (next->has_value()) {
          auto opened = codec_.Open(**next);
          EXPECT_TRUE(opened.ok());
          if (!opened.ok()) return std::nullopt;
          return opened->message.read_response();
        }
        const ssize_t n = ::recv(fd_.get(), buf_.data(), buf_.size(), 0);
        if (n <= 0) return std::nullopt;
        decoder_.Feed(std::span<const uint8_t>(buf_.data(), static_cast<size_t>(n)));
      }
    }
    // The pages until the last (more=false) or the close.
    std::vector<proto::ReadResponse> Rest() {
      std::vector<proto::ReadResponse> pages;
      while (auto page = Next()) {
        pages.push_back(std::move(*page));
        if (!pages.back().more()) break;
      }
      return pages;
    }

   private:
    UniqueFd fd_;
    proto::EnvelopeCodec codec_;
    proto::ClusterKey key_;
    proto::FrameDecoder decoder_{proto::kMaxEnvelopeBytes};
    std::vector<uint8_t> buf_ = std::vector<uint8_t>(65536);
    int64_t counter_ = 0;
  };

  // Sends one request and collects the pages until the last (more=false) or the close.
  std::vector<proto::ReadResponse> Pages(const proto::ClusterKey& key, proto::ReadRequest req) {
    Connection c(service_->tcp_port(), key);
    c.Send(std::move(req));
    return c.Rest();
  }

  // Runs `f` on the service's worker and waits for it.
  void OnWorker(std::function<void()> f) {
    std::promise<void> done;
    asio::post(io_, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  static proto::ReadRequest Req(const std::string& sql, uint64_t max_rows = 0) {
    proto::ReadRequest r;
    r.set_request_id(5);
    r.mutable_statement()->set_sql(sql);
    r.set_max_rows(max_rows);
    return r;
  }
};

TEST_F(SqlTcpPathTest, AHundredThousandRowsComeInPagesOfOneSnapshot) {
  Start({});
  Fill(100000);
  auto pages = Pages(key_, Req("SELECT id, s, s || '!' FROM big ORDER BY id"));
  ASSERT_GT(pages.size(), 2u) << "a result this size comes in several pages";
  uint64_t rows = 0;
  int64_t expect = 1;
  for (size_t i = 0; i < pages.size(); ++i) {
    ASSERT_TRUE(pages[i].ok()) << pages[i].error();
    EXPECT_EQ(pages[i].more(), i + 1 < pages.size());
    EXPECT_LE(pages[i].ByteSizeLong(), SqlReader::PageLimits{}.page_bytes + 1024);
    for (const auto& r : pages[i].rows()) {
      ASSERT_EQ(r.values(0).integer(), expect++);
      ++rows;
    }
  }
  EXPECT_EQ(rows, 100000u);
  ASSERT_EQ(pages[0].columns_size(), 3);
  EXPECT_EQ(pages[0].decltypes(0), "INTEGER");
  EXPECT_EQ(pages[0].decltypes(1), "VARCHAR(20)");
  EXPECT_EQ(pages[0].decltypes(2), "");  // an expression has no declared type
  EXPECT_EQ(pages[0].applied_seq(), 5u);
}

TEST_F(SqlTcpPathTest, PastTheRowCapTheAnswerIsOneClearError) {
  Start({});
  Fill(5000);
  auto pages = Pages(key_, Req("SELECT * FROM big", 1000));
  ASSERT_EQ(pages.size(), 1u) << "no partial result before the error";
  EXPECT_FALSE(pages[0].ok());
  EXPECT_NE(pages[0].error().find("result too large: more than 1000 rows"), std::string::npos)
      << pages[0].error();
  auto exact = Pages(key_, Req("SELECT * FROM big LIMIT 1000", 1000));
  ASSERT_FALSE(exact.empty());
  EXPECT_TRUE(exact.back().ok()) << "exactly the cap is allowed: " << exact.back().error();
  auto write = Pages(key_, Req("DELETE FROM big"));
  ASSERT_EQ(write.size(), 1u);
  EXPECT_NE(write[0].error().find("statement refused"), std::string::npos);
}

TEST_F(SqlTcpPathTest, ABackupIsTheDatabaseFileAtItsSeqInPages) {
  Start({});
  Fill(120000);  // a file of about 2.5 MiB: three pages of 1 MiB
  {
    auto db = store::Database::Open(path_);  // a replica state as real replicas hold it
    ASSERT_TRUE(db.ok() && db->Exec("UPDATE _vsc_replica SET digest = zeroblob(32)").ok());
  }
  proto::ReadRequest req;
  req.set_request_id(7);
  req.set_backup(true);
  req.set_min_seq(5);
  auto pages = Pages(key_, req);
  ASSERT_FALSE(pages.empty());
  ASSERT_TRUE(pages[0].ok()) << pages[0].error();
  ASSERT_GT(pages.size(), 1u) << "a file this size comes in several pages";
  std::string file;
  for (size_t i = 0; i < pages.size(); ++i) {
    ASSERT_TRUE(pages[i].ok()) << pages[i].error();
    EXPECT_EQ(pages[i].more(), i + 1 < pages.size());
    EXPECT_EQ(pages[i].applied_seq(), 5u);
    file += pages[i].file_chunk();
  }
  EXPECT_EQ(file.size(), pages.back().file_size());
  const std::string copy = dir_.File("copy.db");
  std::ofstream(copy, std::ios::binary) << file;
  auto db = store::Database::Open(copy);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto text = [&](const std::string& sql) {
    auto st = db->Prepare(sql);
    if (!st.ok()) return st.status().ToString();
    auto row = st->Step();
    if (!row.ok() || !*row) return std::string("(no row)");
    return std::string(st->ColumnText(0));
  };
  EXPECT_EQ(text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(text("SELECT COUNT(*) || ',' || MAX(s) FROM big"), "120000,row 99999");

  req.set_min_seq(6);
  auto ahead = Pages(key_, req);
  ASSERT_EQ(ahead.size(), 1u);
  EXPECT_EQ(ahead[0].error(), "not yet applied: at seq 5, need 6");
  req.set_min_seq(0);
  req.set_max_bytes(4096);
  auto capped = Pages(key_, req);
  ASSERT_EQ(capped.size(), 1u) << "no partial file before the error";
  EXPECT_NE(capped[0].error().find("backup too large"), std::string::npos) << capped[0].error();
  // The temporary copy and its side files are removed.
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(path_).parent_path())) {
    if (e.path().string().find(".backup-") != std::string::npos) ADD_FAILURE() << e.path();
  }
}

// 60,000 rows of about 650 bytes: some 150 pages. A reader that takes the first page and then
// stops reading holds the rest in the replica, unmade: only what the socket buffers take is made
// ahead. Meanwhile the worker's datagram reads are answered (the query has its own connection).
TEST_F(SqlTcpPathTest, ASlowReaderGetsPagesMadeAsItReadsThemNotTheWholeAnswerAtOnce) {
  Start({0x7f000001});
  Fill(60000);
  Connection slow(service_->tcp_port(), key_, /*rcvbuf=*/32 * 1024);
  slow.Send(Req("SELECT id, s, hex(randomblob(300)) FROM big ORDER BY id"));
  auto first = slow.Next();
  ASSERT_TRUE(first && first->ok() && first->more());
  auto udp = client::ReadClient::Open("127.0.0.1", service_->port(), key_, 2s, 0);
  ASSERT_TRUE(udp.ok());
  auto r = udp->Query(client::MakeStatement("SELECT COUNT(*) FROM big"));
  ASSERT_TRUE(r.ok() && r->ok()) << (r.ok() ? r->error() : r.status().ToString());
  EXPECT_EQ(r->rows(0).values(0).integer(), 60000);
  // Whatever the worker has made by now, the socket buffers bound it (a few MiB at most).
  EXPECT_LT(service_->counters().tcp_pages.Get(), 40u)
      << "pages made ahead of a reader that stopped reading";

  std::vector<proto::ReadResponse> pages = slow.Rest();
  pages.insert(pages.begin(), *first);
  int64_t expect = 1;
  for (const auto& page : pages) {
    ASSERT_TRUE(page.ok()) << page.error();
    for (const auto& row : page.rows()) ASSERT_EQ(row.values(0).integer(), expect++);
  }
  EXPECT_EQ(expect, 60001);
  EXPECT_GT(pages.size(), 100u);
  EXPECT_EQ(service_->counters().tcp_pages.Get(), pages.size());
}

// A snapshot install closes the readers: an answer in progress ends with a page saying so (the
// director then reads from another replica), and reads after the reopen are answered.
TEST_F(SqlTcpPathTest, AnInstallEndsAnAnswerInProgressWithAClearPage) {
  Start({});
  Fill(60000);
  Connection c(service_->tcp_port(), key_, /*rcvbuf=*/32 * 1024);
  c.Send(Req("SELECT id, s, hex(randomblob(300)) FROM big"));
  auto first = c.Next();
  ASSERT_TRUE(first && first->ok() && first->more());
  OnWorker([this] { service_->CloseReader(); });
  std::vector<proto::ReadResponse> rest = c.Rest();
  ASSERT_FALSE(rest.empty());
  EXPECT_FALSE(rest.back().ok());
  EXPECT_EQ(rest.back().error().rfind("replica is installing a snapshot", 0), 0u)
      << rest.back().error();
  OnWorker([this] { ASSERT_TRUE(service_->ReopenReader().ok()); });
  auto again = Pages(key_, Req("SELECT COUNT(*) FROM big"));
  ASSERT_EQ(again.size(), 1u);
  ASSERT_TRUE(again[0].ok()) << again[0].error();
  EXPECT_EQ(again[0].rows(0).values(0).integer(), 60000);
}

TEST_F(SqlTcpPathTest, AnotherKeyGetsNoAnswer) {
  Start({});
  EXPECT_TRUE(Pages(Key(2), Req("SELECT * FROM resources")).empty());
  EXPECT_EQ(Pages(key_, Req("SELECT * FROM resources")).size(), 1u) << "the right key still works";
}

}  // namespace
}  // namespace vsc::realserver
