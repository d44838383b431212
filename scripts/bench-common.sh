# Shell helpers shared by the peer benchmarks (scripts/run-bench, scripts/bench-seed003). Sourced
# after the caller set W (its work directory) and PIDS (the processes it starts); stops them and
# removes W on exit. Every wait is bounded.

cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT

free_port() {  # a port free for TCP and UDP on $1
  python3 - "$1" <<'EOF'
import socket, sys
while True:
    t = socket.socket(); t.bind((sys.argv[1], 0)); p = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind((sys.argv[1], p)); print(p); break
    except OSError:
        pass
EOF
}
wait_tcp() {  # host port: until something accepts (10 s at most)
  for _ in $(seq 1 500); do
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0
    sleep 0.02
  done
  echo "$(basename "$0"): nothing listens on $1:$2 after 10 s; logs in $W" >&2; exit 1
}
cpu_ticks() {  # pids...: utime+stime summed, in clock ticks
  local sum=0 p
  for p in "$@"; do
    [ -r "/proc/$p/stat" ] || continue
    sum=$((sum + $(awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$p/stat")))
  done
  echo "$sum"
}
HZ=$(getconf CLK_TCK)

nginx_backend() {  # name host port root [access-log]: an nginx (1 worker) serving root on host:port
  local d="$W/$1" log="${5:-off}"; mkdir -p "$d/tmp"
  cat >"$d/nginx.conf" <<EOF
daemon off; master_process off; worker_processes 1; worker_rlimit_nofile 20000;
pid $d/nginx.pid; error_log $d/error.log;
events { worker_connections 10000; }
http { access_log $log; client_body_temp_path $d/tmp; proxy_temp_path $d/tmp;
  fastcgi_temp_path $d/tmp; uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  keepalive_timeout 300s; keepalive_requests 1000000; client_header_timeout 300s;
  sendfile on; tcp_nopush on;
  server { listen $2:$3 backlog=4096; root $4; location / { } } }
EOF
  nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" >"$d/out.log" 2>&1 &
  PIDS+=($!)
  wait_tcp "$2" "$3"
}
