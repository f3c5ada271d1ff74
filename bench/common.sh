# Helpers for the bench scripts: nginx on 127.0.0.1 only, the peers, and a release haul.
# Source this file.
# nginx_start ROOT PORT [EXTRA_LOCATION_CONFIG] [CERT KEY] → starts nginx in the background,
# sets NGINX_DIR (and adds it to NGINX_DIRS, which nginx_stop stops). With CERT and KEY it
# serves HTTPS with HTTP/2 offered (ALPN) instead of plain HTTP.
nginx_start() {
    local root=$1 port=$2 extra=${3:-} cert=${4:-} key=${5:-}
    local listen="listen 127.0.0.1:$port;" scheme=http
    if [ -n "$cert" ]; then
        listen="listen 127.0.0.1:$port ssl http2; ssl_certificate $cert; ssl_certificate_key $key;"
        scheme=https
    fi
    NGINX_DIR=$(mktemp -d /tmp/haul-nginx.XXXXXX)
    NGINX_DIRS+=("$NGINX_DIR")
    cat > "$NGINX_DIR/nginx.conf" <<CONF
worker_processes 2;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    default_type application/octet-stream;
    client_body_temp_path $NGINX_DIR/body;
    proxy_temp_path $NGINX_DIR/proxy;
    fastcgi_temp_path $NGINX_DIR/fastcgi;
    uwsgi_temp_path $NGINX_DIR/uwsgi;
    scgi_temp_path $NGINX_DIR/scgi;
    server {
        $listen
        root $root;
        $extra
    }
}
CONF
    nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" || return 1
    for _ in $(seq 1 50); do
        curl -sk -o /dev/null "$scheme://127.0.0.1:$port/" && return 0
        sleep 0.1
    done
    echo "nginx did not start" >&2; return 1
}

NGINX_DIRS=()
nginx_stop() {
    local dir
    for dir in "${NGINX_DIRS[@]}"; do
        [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
    done
}

# A free TCP port on 127.0.0.1.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

ensure_peers() {
    local missing=()
    for tool in nginx curl aria2c; do command -v "$tool" >/dev/null || missing+=("$tool"); done
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx curl aria2 >/dev/null
    fi
}

# The peers, and GNU time to measure them.
ensure_timed_peers() {
    ensure_peers
    command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null; }
}

# The start of a timed comparison: the peers and GNU time, then $work (the first argument,
# default /tmp/haul-compare) and $runs (env RUNS, default 3).
timed_bench_setup() {
    ensure_timed_peers
    work=${1:-/tmp/haul-compare}
    runs=${RUNS:-3}
}

# small_corpus DIR → DIR holds f0000.bin … f4999.bin, 16 KiB of random bytes each (job (b)'s
# corpus), made unless all 5,000 are there already.
small_corpus() {
    local dir=$1
    mkdir -p "$dir"
    [ "$(find "$dir" -maxdepth 1 -name 'f*.bin' | wc -l)" = 5000 ] && return
    python3 - "$dir" <<'PY'
import os, sys
for i in range(5000):
    with open(os.path.join(sys.argv[1], f"f{i:04d}.bin"), "wb") as f:
        f.write(os.urandom(16 * 1024))
PY
}

# The flags of a release build as the README's Install section gives them: on Linux, Swift's
# runtime and Foundation linked into the binary. Every bench binary is built with them, so that
# the floor is measured as haul is, and one build folder serves them all.
release_build_flags=(-c release)
if [ "$(uname -s)" = Linux ]; then release_build_flags+=(--static-swift-stdlib); fi

# Builds haul in release mode and sets $haul to it.
build_haul() {
    export PATH="/opt/swift/usr/bin:$PATH"
    if [ -n "${HAUL_BINARY:-}" ]; then haul=$HAUL_BINARY; return; fi
    local root
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    (cd "$root" && swift build "${release_build_flags[@]}" --product haul >/dev/null)
    haul="$root/.build/release/haul"
}
