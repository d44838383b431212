// WriteNginxConf: the configuration of a test nginx that answers every GET with `body`, run in
// the foreground without a master process, every file (pid, logs, temp paths) in `dir`. Start it
// with `nginx -p DIR -c DIR/nginx.conf -e DIR/error.log`. Header-only, for integration tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace vsc::test_support {

// Writes dir/nginx.conf (creating dir and dir/tmp) and returns its path. `host` is numeric; an
// IPv6 one ("::1") is written in nginx's bracket form.
inline std::string WriteNginxConf(const std::string& dir, const std::string& host, uint16_t port,
                                  const std::string& body) {
  std::filesystem::create_directories(dir + "/tmp");
  const std::string path = dir + "/nginx.conf";
  const std::string listen = host.find(':') == std::string::npos ? host : "[" + host + "]";
  std::ofstream(path) << "daemon off; master_process off; worker_processes 1;\n"
                      << "pid " << dir << "/nginx.pid; error_log " << dir << "/error.log;\n"
                      << "events { worker_connections 512; }\n"
                      << "http { access_log off; client_body_temp_path " << dir << "/tmp;\n"
                      << "  proxy_temp_path " << dir << "/tmp; fastcgi_temp_path " << dir
                      << "/tmp;\n"
                      << "  uwsgi_temp_path " << dir << "/tmp; scgi_temp_path " << dir << "/tmp;\n"
                      << "  server { listen " << listen << ":" << port << ";\n"
                      << "    location / { return 200 \"" << body << "\\n\"; } } }\n";
  return path;
}

}  // namespace vsc::test_support
