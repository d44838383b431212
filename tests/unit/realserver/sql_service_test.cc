#include "realserver/sql_service.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "client/sql_client.h"
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
  void Start(std::vector<uint32_t> trusted) {
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
    ASSERT_TRUE(service_->Start(asio::ip::make_address_v4("127.0.0.1"), 0).ok());
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
    ::sendto(send_fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
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
