// Micro benchmarks for the network layer: HTTP request parsing (whole and byte-wise, pipelined)
// and a loopback UDP echo through UdpBatchSocket (recvmmsg/sendmmsg batches).
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <variant>

#include "net/http_parser.h"
#include "net/http_response.h"
#include "net/udp_batch.h"

namespace {

using vsc::net::HttpRequest;
using vsc::net::HttpRequestParser;

const std::string kRequest =
    "GET /v1/resources/1,2,3,4,5 HTTP/1.1\r\nHost: director:8080\r\nUser-Agent: bench/1.0\r\n"
    "Accept: application/json\r\nAuthorization: Bearer 0123456789abcdef\r\n\r\n";

void BM_HttpParseWhole(benchmark::State& state) {
  HttpRequestParser p;
  for (auto _ : state) {
    auto r = p.Feed(kRequest);
    benchmark::DoNotOptimize(std::get_if<HttpRequest>(&r));
  }
  state.SetBytesProcessed(state.iterations() * kRequest.size());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HttpParseWhole);

void BM_HttpParsePipelined16(benchmark::State& state) {
  std::string stream;
  for (int i = 0; i < 16; ++i) stream += kRequest;
  for (auto _ : state) {
    HttpRequestParser p;
    auto r = p.Feed(stream);
    int n = 0;
    while (std::holds_alternative<HttpRequest>(r)) {
      ++n;
      r = p.Next();
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_HttpParsePipelined16);

void BM_HttpParseByteWise(benchmark::State& state) {
  HttpRequestParser p;
  for (auto _ : state) {
    for (size_t i = 0; i < kRequest.size(); ++i) {
      auto r = p.Feed(std::string_view(kRequest).substr(i, 1));
      benchmark::DoNotOptimize(r.index());
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HttpParseByteWise);

void BM_HttpSerializeResponse(benchmark::State& state) {
  vsc::net::HttpResponse r;
  r.body = std::string(200, 'x');
  for (auto _ : state) benchmark::DoNotOptimize(vsc::net::SerializeResponse(r, true));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HttpSerializeResponse);

// One iteration: a client sends `batch` 64-byte datagrams, the socket echoes them in batches,
// the client reads them back.
void BM_UdpBatchEcho(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  asio::io_context ctx(1);
  vsc::net::UdpBatchOptions opts;
  opts.batch = 64;
  auto sock = vsc::net::UdpBatchSocket::Bind(
      ctx, asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), 0), opts);
  if (!sock.ok()) {
    state.SkipWithError(sock.status().ToString().c_str());
    return;
  }
  (*sock)->Start([](std::span<vsc::net::Datagram> in, vsc::net::SendBatch& out) {
    for (auto& d : in) {
      auto b = out.Prepare(d.data.size());
      std::memcpy(b.data(), d.data.data(), d.data.size());
      out.Commit(d.data.size(), d.peer);
    }
  });
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons((*sock)->local_port());
  char msg[64] = {};
  char buf[2048];
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) {
      ::sendto(fd, msg, sizeof(msg), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
    }
    int got = 0;
    while (got < batch) {
      ctx.poll();
      if (ctx.stopped()) ctx.restart();
      while (::recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) ++got;
    }
  }
  ::close(fd);
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["rx_per_batch"] =
      static_cast<double>((*sock)->stats().rx_packets) / (*sock)->stats().rx_batches;
}
BENCHMARK(BM_UdpBatchEcho)->Arg(1)->Arg(16)->Arg(64);

}  // namespace
BENCHMARK_MAIN();
