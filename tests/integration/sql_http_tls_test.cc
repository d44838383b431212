// HTTPS on the HTTP API (http_cert / http_key, OpenSSL): a self-signed certificate made with
// `openssl req` at test time, curl over https with it as the CA, plain HTTP to the TLS port, the
// users file still applying, and start-up refusing bad files without touching the disk.
#include <filesystem>

#include "integration/sql_http_fixture.h"
#include "integration/vsc_process.h"
#include "support/dir_listing.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A self-signed P-256 certificate for 127.0.0.1 and its key, as PEM files in `dir`.
void MakeCertificate(const std::string& dir, const std::string& name) {
  ShellRun r = Shell(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '" +
      dir + "/" + name + ".key' -out '" + dir + "/" + name + ".crt'");
  ASSERT_EQ(r.exit, 0) << r.out;
}

class SqlHttpsTest : public SqlHttpTest {
 protected:
  void SetUp() override {
    cert_dir_ = MakeTempDir("vsc-tls-");
    ASSERT_NO_FATAL_FAILURE(MakeCertificate(cert_dir_, "a"));
    ASSERT_NO_FATAL_FAILURE(MakeCertificate(cert_dir_, "b"));
  }
  void TearDown() override {
    SqlHttpTest::TearDown();
    std::error_code ec;
    if (!HasFailure()) fs::remove_all(cert_dir_, ec);
  }
  std::string Pem(const std::string& name) const { return cert_dir_ + "/" + name; }

  std::string cert_dir_;
};

TEST_F(SqlHttpsTest, CurlWorksOverHttpsWithTheCertificateAndAuthStillApplies) {
  scheme_ = "https";
  curl_flags_ = "--cacert '" + Pem("a.crt") + "'";
  ASSERT_NO_FATAL_FAILURE(StartCluster(true,
                                       R"j([{"username": "*", "perms": ["ready", "status"]},
           {"username": "app", "password": "pw", "perms": ["execute", "query"]}])j",
                                       {"--http-cert", Pem("a.crt"), "--http-key", Pem("a.key")}));
  Http anonymous = Execute({"CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"});
  EXPECT_EQ(anonymous.status, 401) << "the users file applies over HTTPS: " << anonymous.body;
  curl_flags_ = "--cacert '" + Pem("a.crt") + "' -u app:pw";
  ASSERT_EQ(Execute({"CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"}).status, 200);
  Http ins = Execute(json::parse(R"j([["INSERT INTO t(v) VALUES(?)", "over tls"]])j"));
  ASSERT_EQ(ins.status, 200) << ins.body;
  Http q = Curl("GET", "/db/query?level=weak&q=SELECT%20v%20FROM%20t");
  ASSERT_EQ(q.status, 200) << q.body;
  EXPECT_EQ(q.Json()["results"][0]["values"], json::parse(R"j([["over tls"]])j")) << q.body;
  Http nodes = Curl("GET", "/nodes");
  EXPECT_EQ(nodes.Json()["director"].value("api_addr", "").rfind("https://", 0), 0u) << nodes.body;
  EXPECT_EQ(Curl("GET", "/status").Json()["http"]["tls"]["enabled"], true);

  // Another CA does not vouch for this server: the client refuses, so it is really TLS.
  curl_flags_ = "--cacert '" + Pem("b.crt") + "' -u app:pw";
  EXPECT_EQ(Curl("GET", "/readyz").body.rfind("curl failed", 0), 0u);
  // Plain HTTP to the TLS port: a clear 400 in plain text, connection closed, nothing served.
  scheme_ = "http";
  curl_flags_ = "-u app:pw";
  Http plain = Curl("GET", "/db/query?q=SELECT%20v%20FROM%20t");
  EXPECT_EQ(plain.status, 400) << plain.body;
  EXPECT_NE(plain.body.find("this port speaks HTTPS only: use https://"), std::string::npos)
      << plain.body;
}

// A bad http_cert / http_key stops the start with a message naming the file; nothing is written.
TEST_F(SqlHttpsTest, BadCertificateFilesStopTheStartAndWriteNothing) {
  work_dir_ = MakeTempDir("vsc-tls-start-");
  std::ofstream(Pem("garbage.crt")) << "not a certificate\n";
  struct Case {
    std::string cert, key, says;
  };
  const std::vector<Case> cases = {
      {Pem("missing.crt"), Pem("a.key"), "http_cert " + Pem("missing.crt") + " cannot be read"},
      {Pem("a.crt"), Pem("missing.key"), "http_key " + Pem("missing.key") + " cannot be read"},
      {Pem("garbage.crt"), Pem("a.key"), "is not a PEM certificate"},
      {Pem("a.crt"), Pem("a.crt"), "is not an unencrypted PEM private key"},
      {Pem("a.crt"), Pem("b.key"), "does not belong to the certificate in http_cert"},
      {Pem("a.crt"), "", "http_cert and http_key go together"},
  };
  for (const Case& c : cases) {
    const std::string dir = work_dir_ + "/run";
    fs::create_directories(dir);
    std::vector<std::string> args = {
        "director",         "--insecure",  "--lookup-port", "0", "--control-port", "0",
        "--heartbeat-port", "0",           "--admin-port",  "0", "--ring-port",    "0",
        "--http-port",      "0",           "--workers",     "1", "--http-cert",    c.cert,
        "--ready-file",     dir + "/ready"};
    if (!c.key.empty()) args.insert(args.end(), {"--http-key", c.key});
    auto [code, out] = RunVsc(args, work_dir_ + "/director.out", 10s, dir);
    EXPECT_NE(code, 0) << out;
    EXPECT_NE(out.find(c.says), std::string::npos) << "wanted: " << c.says << "\ngot: " << out;
    EXPECT_EQ(test_support::SortedListing(dir), std::vector<std::string>{})
        << "no log, lock, token or ready file after: " << c.says;
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace vsc::integration
