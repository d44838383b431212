// IPv6 virtual services as an operator drives them (issue 12, "IPv4 and IPv6 alike"), with a
// real `vsc director` process: a TOML [[service]] on "[::1]:PORT", ipvsadm's verbs with
// bracketed addresses through `vsc adm` (-A, -a, -L -n, -S -n, -C, -R), persistence with an
// IPv6 prefix length (-M 64) and its templates in -L -c, the admin API's GET and PUT of an IPv6
// key, the refusal of a destination of the other family, and the table across a restart. The
// commands are those of docs/operations.md's IPv6 example.
#include <gtest/gtest.h>

#include <asio.hpp>
#include <cctype>
#include <fstream>
#include <string>

#include "common/subprocess.h"
#include "integration/services_cli_fixture.h"
#include "net/http_client.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;

uint16_t FreeV6Port() {
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, {asio::ip::address_v6::loopback(), 0});
  return a.local_endpoint().port();
}

class ServicesIpv6Test : public ServicesCliTest {
 protected:
  // One admin API request with the director's token: the HTTP status and the body.
  std::pair<int, std::string> Api(const std::string& method, const std::string& path,
                                  const std::string& body = "") {
    std::string token = ReadFile(dir_ + "/director-admin.token");
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
      token.pop_back();
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Authorization", "Bearer " + token}};
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    auto r = net::HttpRequestSync("127.0.0.1", admin_port_, method, path, body, headers, 5s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {0, ""};
    return {r->status, r->body};
  }
};

TEST_F(ServicesIpv6Test, Ipv6ServicesThroughTomlVscAdmAndTheAdminApi) {
  const std::string udp_vip = "[::1]:" + std::to_string(FreeV6Port());
  const std::string udp_rip = "[::1]:" + std::to_string(FreeV6Port());
  std::ofstream(dir_ + "/d.toml", std::ios::app)
      << "\n[[service]]\nprotocol = \"udp\"\naddress = \"" << udp_vip << "\"\n"
      << "lb_algo = \"sh\"\npersistence_timeout = 60\npersistence_granularity = \"48\"\n"
      << "[[service.server]]\naddress = \"" << udp_rip << "\"\n"
      << "[service.server.check]\ntype = \"TCP_CHECK\"\ndelay_loop = \"600s\"\n";
  ASSERT_NO_FATAL_FAILURE(StartDirector());
  const std::string from_toml = "-A -t 127.0.0.1:1 -s rr\n-A -u " + udp_vip +
                                " -s sh -p 60 -M 48\n-a -u " + udp_vip + " -r " + udp_rip +
                                " -m -w 1\n";
  EXPECT_EQ(Saved(), from_toml);

  const std::string vip = "[::1]:" + std::to_string(FreeV6Port());
  const std::string rip = "[::1]:" + std::to_string(FreeV6Port());
  auto [added, add_out] = Adm({"-A", "-t", vip, "-s", "rr", "-p", "300", "-M", "64"});
  EXPECT_EQ(added, 0) << add_out;
  auto [dest, dest_out] = Adm({"-a", "-t", vip, "-r", rip, "-m", "-w", "2"});
  EXPECT_EQ(dest, 0) << dest_out;
  auto [mixed, mixed_out] = Adm({"-a", "-t", vip, "-r", "127.0.0.1:80", "-m"});
  EXPECT_NE(mixed, 0);
  EXPECT_NE(mixed_out.find("Different address family"), std::string::npos) << mixed_out;
  auto [bad_mask, bad_mask_out] = Adm({"-E", "-t", vip, "-s", "rr", "-p", "300", "-M", "129"});
  EXPECT_NE(bad_mask, 0);
  EXPECT_NE(bad_mask_out.find("netmask"), std::string::npos) << bad_mask_out;
  const std::string saved = Saved();
  EXPECT_EQ(saved, "-A -t 127.0.0.1:1 -s rr\n-A -t " + vip + " -s rr -p 300 -M 64\n-a -t " + vip +
                       " -r " + rip + " -m -w 2\n-A -u " + udp_vip + " -s sh -p 60 -M 48\n-a -u " +
                       udp_vip + " -r " + udp_rip + " -m -w 1\n")
      << "ipvsadm's order: family, then protocol";
  auto [listed, listing] = Adm({"-L", "-n"});
  EXPECT_EQ(listed, 0);
  EXPECT_NE(listing.find("TCP  " + vip + " rr persistent 300 mask 64"), std::string::npos)
      << listing;
  EXPECT_NE(listing.find("  -> " + rip), std::string::npos) << listing;

  // The admin API names the service "tcp/[::1]:PORT", brackets as they are or percent-encoded.
  auto [get_status, get_body] = Api("GET", "/v1/services/tcp/" + vip);
  EXPECT_EQ(get_status, 200) << get_body;
  const auto got = nlohmann::json::parse(get_body, nullptr, false);
  EXPECT_EQ(got.is_object() ? got["config"].value("address", "") : "", vip) << get_body;
  std::string encoded = vip;
  encoded.replace(0, 1, "%5B");
  encoded.replace(encoded.find(']'), 1, "%5D");
  EXPECT_EQ(Api("GET", "/v1/services/tcp/" + encoded).first, 200);
  auto [put_status, put_body] =
      Api("PUT", "/v1/services/tcp/" + vip,
          R"({"protocol": "tcp", "address": ")" + vip + R"(", "lb_algo": "wlc"})");
  EXPECT_EQ(put_status, 200) << put_body;
  // A merge patch: the scheduler changes, the persistence stays.
  EXPECT_NE(Saved().find("-A -t " + vip + " -s wlc -p 300 -M 64\n"), std::string::npos) << Saved();

  // A client of the persistent service: -L -c lists its template with the whole network (::1
  // masked to /64 is ::) beside its connection.
  {
    auto port_of = [](const std::string& ap) {
      return static_cast<uint16_t>(std::stoi(ap.substr(ap.rfind(':') + 1)));
    };
    asio::io_context io;
    asio::ip::tcp::acceptor backend(io, {asio::ip::address_v6::loopback(), port_of(rip)});
    std::string listing;
    ASSERT_TRUE(WaitUntil(  // its connect check, every second, finds it listening
        [&] {
          listing = Adm({"-L", "-n"}).second;
          return !ConnectionLine(listing, {"  -> " + rip, " UP"}).empty();
        },
        20s, 100ms))
        << listing;
    asio::ip::tcp::socket client(io);
    client.connect({asio::ip::address_v6::loopback(), port_of(vip)});
    EXPECT_TRUE(WaitUntil(
        [&] {
          listing = Adm({"-L", "-c", "-n"}).second;
          return !ConnectionLine(listing, {"TCP ", "NONE", "[::]:0 ", vip, rip}).empty();
        },
        10s, 50ms))
        << listing;
  }

  // -S | -R: cleared, restored from the saved text, the same table; a restart keeps it.
  EXPECT_EQ(Adm({"-C"}).first, 0);
  EXPECT_EQ(Saved(), "");
  EXPECT_TRUE(Restore(saved));
  EXPECT_EQ(Saved(), saved);
  EXPECT_EQ(director_->Terminate(10s), 0);
  ASSERT_NO_FATAL_FAILURE(StartDirector());
  EXPECT_EQ(Saved(), saved) << "the restart lost the IPv6 services";
  EXPECT_EQ(director_->Terminate(10s), 0);
}

}  // namespace
}  // namespace vsc::integration
