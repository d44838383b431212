#include "director/director.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/ready_file.h"
#include "common/signals.h"
#include "membership/membership.h"
#include "sched/scheduler.h"

namespace vsc::director {

Status ValidateConfig(const DirectorConfig& c) {
  if (auto s = sched::MakeScheduler(c.scheduler); !s.ok()) return s.status();
  if (auto m = ParseNetmask(c.persistence_netmask); !m.ok()) return m.status();
  membership::Config mc;
  mc.heartbeat_interval = std::chrono::milliseconds(c.heartbeat_interval_ms);
  mc.silent_after = static_cast<int>(c.silent_after);
  mc.down_after = static_cast<int>(c.down_after);
  VSC_RETURN_IF_ERROR(membership::ValidateConfig(mc));
  if (c.max_servers == 0 || c.max_servers > 65536) {
    return InvalidArgument("max_servers must be 1 to 65536");
  }
  asio::error_code ec;
  asio::ip::make_address_v4(c.listen, ec);
  if (ec) return InvalidArgument("listen '" + c.listen + "' is not an IPv4 address");
  asio::ip::make_address_v4(c.admin_listen, ec);
  if (ec) return InvalidArgument("admin_listen '" + c.admin_listen + "' is not an IPv4 address");
  return Status::Ok();
}

Director::Director(DirectorConfig config, proto::ClusterKey key, std::string admin_token,
                   const Clock& clock)
    : config_(std::move(config)),
      key_(std::move(key)),
      admin_token_(std::move(admin_token)),
      clock_(clock),
      pool_(config_.workers) {}

Director::~Director() { Stop(); }

Status Director::Start() {
  VSC_RETURN_IF_ERROR(ValidateConfig(config_));
  membership::Config mc;
  mc.heartbeat_interval = std::chrono::milliseconds(config_.heartbeat_interval_ms);
  mc.silent_after = static_cast<int>(config_.silent_after);
  mc.down_after = static_cast<int>(config_.down_after);
  ControlSettings settings;
  settings.scheduler = config_.scheduler;
  settings.persistence_timeout_s = config_.persistence_timeout_s;
  settings.persistence_netmask = *ParseNetmask(config_.persistence_netmask);
  settings.max_servers = config_.max_servers;
  plane_ = std::make_unique<ControlPlane>(mc, settings);
  control_ = std::make_unique<ControlServer>(control_io_, *plane_, key_, clock_,
                                             [this](ViewPtr v) { Publish(std::move(v)); });

  sched::SchedulerOptions so;
  so.mh_table_size = config_.mh_table_size;
  so.dwlc_reference_ms = config_.dwlc_reference_ms;
  const auto vip = asio::ip::make_address_v4(config_.listen);
  uint16_t port = config_.lookup_port;
  std::vector<WorkerCounters*> counters;
  for (size_t i = 0; i < pool_.size(); ++i) {
    worker_counters_.push_back(std::make_unique<WorkerCounters>(config_.max_servers));
    counters.push_back(worker_counters_.back().get());
    auto& io = pool_.context(i);
    udp_.push_back(std::make_unique<UdpService>(io, clock_, *worker_counters_.back(), so));
    tcp_.push_back(std::make_unique<TcpService>(io, clock_, *worker_counters_.back(), so));
    // The first worker may bind port 0; the others join the port it got (SO_REUSEPORT).
    VSC_RETURN_IF_ERROR(udp_.back()->Start(
        asio::ip::udp::endpoint(vip, port),
        std::chrono::milliseconds(config_.heartbeat_interval_ms)).Annotate("lookup service (UDP)"));
    port = udp_.back()->local_port();
    VSC_RETURN_IF_ERROR(
        tcp_.back()->Start(asio::ip::tcp::endpoint(vip, port)).Annotate("lookup service (TCP)"));
  }
  lookup_port_ = port;

  VSC_RETURN_IF_ERROR(control_->Start(asio::ip::tcp::endpoint(vip, config_.control_port),
                                      asio::ip::udp::endpoint(vip, config_.heartbeat_port)));
  admin_ = std::make_unique<AdminApi>(*plane_, *control_, counters, config_, clock_,
                                      admin_token_, lookup_port_);
  admin_http_ = std::make_unique<net::HttpServer>(
      control_io_,
      asio::ip::tcp::endpoint(asio::ip::make_address_v4(config_.admin_listen), config_.admin_port),
      [this](const net::HttpRequest& r) { return admin_->Handle(r); });
  VSC_RETURN_IF_ERROR(admin_http_->Start().Annotate("admin API"));
  rate_timer_ = std::make_unique<asio::steady_timer>(control_io_);
  ArmRateTimer();

  pool_.Start();
  control_thread_ = std::thread([this] { control_io_.run(); });
  started_ = true;
  if (!config_.ready_file.empty()) {
    VSC_RETURN_IF_ERROR(WriteReadyFile(
        config_.ready_file, {{"lookup_port", std::to_string(lookup_port_)},
                             {"control_port", std::to_string(control_port())},
                             {"heartbeat_port", std::to_string(heartbeat_port())},
                             {"admin_port", std::to_string(admin_port())}}));
  }
  spdlog::info(
      "director up: lookup {}:{} (udp dr, tcp proxy), control {}, heartbeat {}, admin {}:{}, "
      "{} workers, scheduler {}",
      config_.listen, lookup_port_, control_port(), heartbeat_port(), config_.admin_listen,
      admin_port(), pool_.size(), config_.scheduler);
  return Status::Ok();
}

void Director::ArmRateTimer() {
  rate_timer_->expires_after(std::chrono::seconds(1));
  rate_timer_->async_wait([this](const asio::error_code& ec) {
    if (ec) return;
    admin_->SampleRates();
    ArmRateTimer();
  });
}

void Director::Publish(ViewPtr view) {
  for (size_t i = 0; i < pool_.size(); ++i) {
    UdpService* u = udp_[i].get();
    TcpService* t = tcp_[i].get();
    pool_.Post(i, [u, t, view] {
      u->OnView(view);
      t->OnView(view);
    });
  }
}

void Director::Stop() {
  if (!started_) return;
  started_ = false;
  asio::post(control_io_, [this] {
    if (rate_timer_) rate_timer_->cancel();
    if (admin_http_) admin_http_->Stop();
    control_->Stop();
    control_io_.stop();
  });
  for (size_t i = 0; i < pool_.size(); ++i) {
    UdpService* u = udp_[i].get();
    TcpService* t = tcp_[i].get();
    pool_.Post(i, [u, t] {
      u->Stop();
      t->Stop();
    });
  }
  if (control_thread_.joinable()) control_thread_.join();
  pool_.Stop();
  pool_.Join();
  spdlog::info("director stopped");
}

void Director::RunUntilSignal() {
  int sig = WaitForTerminationSignal();
  spdlog::info("signal {} received, stopping", sig);
  Stop();
}

}  // namespace vsc::director
