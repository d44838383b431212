#include "realserver/realserver.h"

#include <spdlog/spdlog.h>

#include <sstream>

#include "common/ready_file.h"
#include "common/signals.h"
#include "net/endpoint.h"

namespace vsc::realserver {
namespace {

Result<std::vector<uint32_t>> ParseAddressList(const std::string& text) {
  std::vector<uint32_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    asio::error_code ec;
    auto a = asio::ip::make_address_v4(item, ec);
    if (ec) return InvalidArgument("trusted_forwarders: '" + item + "' is not an IPv4 address");
    out.push_back(a.to_uint());
  }
  return out;
}

}  // namespace

Status ValidateConfig(const RealServerConfig& c) {
  if (c.id.empty()) return InvalidArgument("id is required: give each real server a unique name");
  if (c.id.size() > 64) return InvalidArgument("id is longer than 64 bytes");
  if (c.weight > 65535) return InvalidArgument("weight must be 0 to 65535");
  if (c.workers == 0) return InvalidArgument("workers must be at least 1");
  asio::error_code ec;
  asio::ip::make_address_v4(c.listen, ec);
  if (ec) return InvalidArgument("listen '" + c.listen + "' is not an IPv4 address");
  if (auto d = net::ParseTcpEndpoint(c.director); !d.ok()) {
    return d.status().Annotate("director");
  }
  if (auto t = ParseAddressList(c.trusted_forwarders); !t.ok()) return t.status();
  return Status::Ok();
}

RealServer::RealServer(RealServerConfig config, proto::ClusterKey key, const Clock& clock)
    : config_(std::move(config)), key_(std::move(key)), clock_(clock), pool_(config_.workers) {}

RealServer::~RealServer() { Stop(); }

Status RealServer::Start() {
  VSC_RETURN_IF_ERROR(ValidateConfig(config_));
  VSC_ASSIGN_OR_RETURN(auto director, net::ParseTcpEndpoint(config_.director));
  VSC_ASSIGN_OR_RETURN(auto trusted, ParseAddressList(config_.trusted_forwarders));
  if (trusted.empty()) trusted.push_back(director.address().to_v4().to_uint());

  const auto address = asio::ip::make_address_v4(config_.listen);
  uint16_t lookup_port = config_.lookup_port;
  uint16_t http_port = config_.http_port;
  for (size_t i = 0; i < pool_.size(); ++i) {
    auto reader = store::ResourceReader::Open(config_.db);
    if (!reader.ok()) return reader.status().Annotate("opening the resource database");
    services_.push_back(std::make_unique<LookupService>(pool_.context(i), clock_,
                                                        std::move(reader).value(), load_, trusted));
    VSC_RETURN_IF_ERROR(services_.back()->Start(address, lookup_port, http_port));
    lookup_port = services_.back()->lookup_port();
    http_port = services_.back()->http_port();
  }
  lookup_port_ = lookup_port;
  http_port_ = http_port;

  AgentOptions options;
  options.id = config_.id;
  options.director = director;
  options.weight = config_.weight;
  options.incarnation = static_cast<uint64_t>(clock_.WallMicros());
  auto add = [&](const char* service, uint16_t port) {
    proto::Endpoint e;
    e.set_service(service);
    e.set_host(config_.listen);
    e.set_port(port);
    options.endpoints.push_back(e);
  };
  add("lookup-udp", lookup_port_);
  add("lookup-tcp", lookup_port_);
  add("http", http_port_);
  options.capabilities = {"lookup"};
  agent_ = std::make_unique<Agent>(control_io_, options, key_, clock_, load_);
  control_guard_ = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(
      control_io_.get_executor());
  agent_->Start();
  pool_.Start();
  control_thread_ = std::thread([this] { control_io_.run(); });
  started_ = true;
  if (!config_.ready_file.empty()) {
    VSC_RETURN_IF_ERROR(WriteReadyFile(config_.ready_file,
                                       {{"lookup_port", std::to_string(lookup_port_)},
                                        {"http_port", std::to_string(http_port_)}}));
  }
  spdlog::info("real server {} up: lookup {}:{} (udp, tcp), http {}:{}, db {}, director {}",
               config_.id, config_.listen, lookup_port_, config_.listen, http_port_, config_.db,
               config_.director);
  return Status::Ok();
}

void RealServer::Stop() {
  if (!started_) return;
  started_ = false;
  agent_->Stop();
  for (size_t i = 0; i < pool_.size(); ++i) {
    LookupService* s = services_[i].get();
    pool_.Post(i, [s] { s->Stop(); });
  }
  control_guard_.reset();
  control_io_.stop();
  if (control_thread_.joinable()) control_thread_.join();
  pool_.Stop();
  pool_.Join();
  spdlog::info("real server {} stopped", config_.id);
}

void RealServer::RunUntilSignal() {
  int sig = WaitForTerminationSignal();
  spdlog::info("signal {} received, leaving the cluster", sig);
  Stop();
}

}  // namespace vsc::realserver
