#!/usr/bin/env python3
"""Issue #20: how `haul daemon` holds up under abuse, and what a normal client sees meanwhile.

Usage: abuse.py HAUL

Starts HAUL as a daemon on a fresh state directory (TCP on a free port of 127.0.0.1, a unix
socket, a known secret), with a soft open-file limit of 1,024 as systemd and most shells give a
service (the daemon raises it to the hard limit itself), then runs these phases one after another:

  baseline     nothing but the normal clients, 3 s
  idle         1,100 TCP connections opened and held open without sending a byte, 5 s
  websockets   300 WebSockets held open, each sending tellActive once a second, 5 s
  batch        100 bodies, each a JSON-RPC batch of 100,000 calls (1.5 MB: the shortest calls, so
               that the body is under the 2 MiB limit and the batch limit is what answers)
  big bodies   10 HTTP bodies of 3 MiB, then one 3 MiB WebSocket message
  secrets      10,000 requests with a wrong secret, 50 connections at once
  half-open    10,000 TCP connections, each sending the start of a request head and then
               nothing, held 5 s (last: the backlog they leave takes the daemon a while to drain)
  after        nothing but the normal clients again, 70 s: wrong secrets are forgiven after
               60 s without one (SecretThrottle), so the TCP client is shown recovering

Two normal clients run all along in a separate process (so that the abusers' work in this
process does not slow them): one on the unix socket and one on TCP with the right secret, each
calling aria2.tellActive over a keep-alive connection every 20 ms and timing each call. The
same process samples the daemon's resident memory (VmRSS) every 100 ms. Prints one table.
"""
import asyncio, json, os, re, resource, shutil, socket, statistics, subprocess, sys, tempfile, threading, time

SECRET = "abuse-bench-secret"
TELL_ACTIVE = {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellActive"}


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class HTTPConnection:
    """One keep-alive HTTP/1.1 connection speaking POST /jsonrpc."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    @classmethod
    async def tcp(cls, host, port):
        return cls(*await asyncio.open_connection(host, port))

    @classmethod
    async def unix(cls, path):
        return cls(*await asyncio.open_unix_connection(path))

    async def post(self, body: bytes):
        head = (f"POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        self.writer.write(head + body)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("closed")
        status = int(status_line.split()[1])
        length, chunked = None, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
            elif name.strip().lower() == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
        if chunked:
            data = b""
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                data += chunk[:-2]
        else:
            data = await self.reader.readexactly(length or 0)
        return status, data

    def close(self):
        self.writer.close()


def service_fd_limit():
    """In the daemon's process before it starts: the soft limit a service usually gets."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))


def call_body(token):
    body = dict(TELL_ACTIVE)
    body["params"] = [f"token:{token}"] if token else []
    return json.dumps(body).encode()


# ---- the probe process: normal clients and the memory sampler --------------------------------

async def probe_client(kind, connect, body, out, stop):
    connection = None
    while not stop.is_set():
        start = time.monotonic()
        ok = False
        try:
            if connection is None:
                connection = await connect()
            status, data = await connection.post(body)
            ok = status == 200 and b'"result"' in data
        except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
            if connection:
                connection.close()
            connection = None
        out.write(f"{kind} {start:.6f} {time.monotonic() - start:.6f} {int(ok)}\n")
        await asyncio.sleep(0.02)


async def probe_memory(pid, out, stop):
    while not stop.is_set():
        with open(f"/proc/{pid}/status") as status:
            rss = int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1)) * 1024
        out.write(f"rss {time.monotonic():.6f} {rss} 1\n")
        await asyncio.sleep(0.1)


async def probe(pid, port, socket_path, samples_path, stop_path):
    stop = asyncio.Event()
    with open(samples_path, "w", buffering=1) as out:
        tasks = [
            asyncio.create_task(probe_client("unix", lambda: HTTPConnection.unix(socket_path), call_body(None), out, stop)),
            asyncio.create_task(probe_client("tcp", lambda: HTTPConnection.tcp("127.0.0.1", port), call_body(SECRET), out, stop)),
            asyncio.create_task(probe_memory(pid, out, stop)),
        ]
        while not os.path.exists(stop_path):
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait(tasks, timeout=40)


# ---- the abusers ------------------------------------------------------------------------------

async def idle_connections(port, count=1100, hold=5.0, opening=b""):
    """`count` connections held `hold` seconds, each sending `opening` (nothing by default)."""
    async def connect():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return None
        if opening:
            writer.write(opening)
        return reader, writer

    connections = [c for c in await asyncio.gather(*(connect() for _ in range(count))) if c]
    await asyncio.sleep(hold)
    open_after = sum(1 for reader, _ in connections if not reader.at_eof())
    for _, writer in connections:
        writer.close()
    return f"{len(connections)} of {count} opened, {open_after} still open after {hold:.0f} s"


def half_open(port):
    return idle_connections(port, count=10_000, opening=b"POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")


async def websockets_phase(port, count=300, hold=5.0):
    import websockets
    uri = f"ws://127.0.0.1:{port}/jsonrpc"
    sockets = await asyncio.gather(*(websockets.connect(uri, max_size=None, open_timeout=30) for _ in range(count)))
    answered = 0

    async def talk(ws):
        nonlocal answered
        deadline = time.monotonic() + hold
        while time.monotonic() < deadline:
            await ws.send(call_body(SECRET).decode())
            # Skip notifications; wait for the answer to this call.
            while True:
                message = json.loads(await ws.recv())
                if "id" in message:
                    answered += "result" in message
                    break
            await asyncio.sleep(1.0)

    await asyncio.gather(*(talk(ws) for ws in sockets))
    await asyncio.gather(*(ws.close() for ws in sockets))
    return f"{count} open, {answered} tellActive answered"


async def batch_phase(port, calls=100_000, repeats=100):
    body = ("[" + ",".join(['{"method":"x"}'] * calls) + "]").encode()
    connection = await HTTPConnection.tcp("127.0.0.1", port)
    times, answer = [], b""
    for _ in range(repeats):
        start = time.monotonic()
        _, answer = await connection.post(body)
        times.append(time.monotonic() - start)
    connection.close()
    message = json.loads(answer).get("error", {}).get("message", "?")
    return f"{len(body) / 1e6:.1f} MB each, answered in {statistics.median(times) * 1000:.0f} ms: \"{message}\""


async def big_bodies(port, size=3 << 20, repeats=10):
    import websockets
    body = b'{"jsonrpc":"2.0","id":1,"method":"aria2.tellActive","params":["' + b"x" * size + b'"]}'
    statuses, times = [], []
    for _ in range(repeats):
        connection = await HTTPConnection.tcp("127.0.0.1", port)
        start = time.monotonic()
        try:
            status, _ = await connection.post(body)
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            status = "closed"
        times.append(time.monotonic() - start)
        statuses.append(status)
        connection.close()
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/jsonrpc", max_size=None)
    try:
        # The daemon may close the connection while the message is still being sent.
        await ws.send(body.decode())
        await asyncio.wait_for(ws.recv(), 10)
        close = "answered (not expected)"
    except websockets.ConnectionClosed as closed:
        close = f"closed with {closed.rcvd.code if closed.rcvd else 'no code'}"
    codes = ", ".join(f"{statuses.count(s)}× {s}" for s in sorted(set(statuses), key=str))
    return f"HTTP: {codes} in {statistics.median(times) * 1000:.0f} ms; WebSocket: {close}"


async def wrong_secrets(port, total=10_000, concurrency=50):
    body = call_body("not-the-secret")
    remaining = total
    answers = {}

    async def worker():
        nonlocal remaining
        connection = await HTTPConnection.tcp("127.0.0.1", port)
        while remaining > 0:
            remaining -= 1
            _, data = await connection.post(body)
            message = json.loads(data).get("error", {}).get("message", "ok?")
            key = "refused unchecked" if "too many" in message else message
            answers[key] = answers.get(key, 0) + 1
        connection.close()

    start = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.monotonic() - start
    summary = ", ".join(f"{count} {message}" for message, count in sorted(answers.items()))
    return f"{total} sent in {elapsed:.1f} s: {summary}"


async def quiet(seconds):
    await asyncio.sleep(seconds)
    return "-"


# ---- the report ---------------------------------------------------------------------------------

def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def latency(samples, kind, start, end):
    chosen = [(latency, ok) for k, t, latency, ok in samples if k == kind and start <= t < end]
    if not chosen:
        return "no call completed"
    times = [latency * 1000 for latency, _ in chosen]
    failed = sum(1 for _, ok in chosen if not ok)
    text = f"{statistics.median(times):.1f} / {percentile(times, 0.99):.1f} (n={len(times)}"
    return text + (f", {failed} failed)" if failed else ")")


def main():
    haul = sys.argv[1]
    raise_fd_limit()
    print("load average before the run (other work on this machine): " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    root = tempfile.mkdtemp(prefix="haul-abuse-")
    state, downloads = os.path.join(root, "state"), os.path.join(root, "downloads")
    os.makedirs(downloads)
    socket_path = os.path.join(root, "d.sock")
    daemon = subprocess.Popen(
        [haul, "daemon", "--socket", socket_path, "--state-dir", state, "--rpc-listen-port", "0",
         "--rpc-secret", SECRET, "--dir", downloads, "--log-level", "error"],
        stderr=subprocess.PIPE, text=True, preexec_fn=service_fd_limit)
    probe_process = None
    logged = []
    try:
        ready = daemon.stderr.readline()
        match = re.search(r"tcp=[\d.]+:(\d+)", ready)
        if not match:
            sys.exit(f"the daemon did not start: {ready!r}")
        port = int(match.group(1))
        # Keep reading what the daemon logs: a pipe nobody drains fills up (64 KiB), and then
        # the daemon's next log line blocks the thread writing it. The half-open phase makes
        # it log one error line per connection it closes (Hummingbird's upgrade handler).
        threading.Thread(target=lambda: logged.extend(daemon.stderr), daemon=True).start()
        samples_path, stop_path = os.path.join(root, "samples"), os.path.join(root, "stop")
        probe_process = subprocess.Popen(
            [sys.executable, __file__, "--probe", str(daemon.pid), str(port), socket_path, samples_path, stop_path])
        phases = [
            ("baseline", lambda: quiet(3)),
            ("1,100 idle TCP connections", lambda: idle_connections(port)),
            ("300 WebSockets", lambda: websockets_phase(port)),
            ("100,000-call batch ×100", lambda: batch_phase(port)),
            ("3 MiB bodies ×10, 1 WS message", lambda: big_bodies(port)),
            ("10,000 wrong secrets", lambda: wrong_secrets(port)),
            ("10,000 half-open requests", lambda: half_open(port)),
            ("after, 0–5 s", lambda: quiet(5)),
            ("after, 5–65 s", lambda: quiet(60)),
            ("after, 65–70 s", lambda: quiet(5)),
        ]
        time.sleep(1.0)  # the probe's first calls open its connections
        windows = []
        for name, phase in phases:
            start = time.monotonic()
            outcome = asyncio.run(phase())
            windows.append((name, start, time.monotonic(), outcome))
        open(stop_path, "w").close()
        probe_process.wait(timeout=60)
        samples = []
        with open(samples_path) as lines:
            for line in lines:
                kind, t, value, ok = line.split()
                samples.append((kind, float(t), float(value), ok == "1"))
        rss = [(t, value) for kind, t, value, _ in samples if kind == "rss"]
        print("| phase | s | what the abuser saw | unix client ms median / p99 | TCP client (secret) ms median / p99 | daemon RSS max MiB |")
        print("|---|---|---|---|---|---|")
        for name, start, end, outcome in windows:
            peak = max((value for t, value in rss if start <= t < end), default=None)
            peak_text = f"{peak / 2**20:.1f}" if peak else "not sampled"
            print(f"| {name} | {end - start:.1f} | {outcome} | {latency(samples, 'unix', start, end)} "
                  f"| {latency(samples, 'tcp', start, end)} | {peak_text} |")
        everything = (windows[0][1], windows[-1][2])
        print()
        print(f"whole run: unix client {latency(samples, 'unix', *everything)} ms, "
              f"TCP client {latency(samples, 'tcp', *everything)} ms; "
              f"daemon RSS first {rss[0][1] / 2**20:.1f} MiB, peak {max(v for _, v in rss) / 2**20:.1f} MiB, "
              f"last {rss[-1][1] / 2**20:.1f} MiB")
    finally:
        if probe_process and probe_process.poll() is None:
            probe_process.terminate()
        daemon.terminate()
        daemon.wait(timeout=60)
        print(f"the daemon logged {len(logged)} lines at level error")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        pid, port, socket_path, samples_path, stop_path = sys.argv[2:7]
        asyncio.run(probe(int(pid), int(port), socket_path, samples_path, stop_path))
    else:
        main()
