#!/usr/bin/env python3
"""Issue #16 (f): what a long history costs `haul daemon`.

Starts a release daemon on a fresh state directory, has it complete COUNT downloads through
aria2's `addUri` (sent in JSON-RPC batches of BATCH, each URL fetched from nginx under its
own `out` name), waits until nothing is active or waiting, then reports the store's size on
disk, the daemon's resident memory, and how long `tellStopped(0, 1000)` takes to answer
(median and worst of 20 calls). aria2's session keeps `--max-download-result` (default
1,000) stopped downloads, so none of these should follow COUNT.
Usage: daemon_history.py HAUL URL_LIST_FILE [COUNT] [BATCH]
"""
import os, shutil, statistics, sys, tempfile, time
from daemon_bench import Daemon

haul, list_file = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000
urls = [line.strip() for line in open(list_file) if line.strip()]
root = tempfile.mkdtemp(prefix="haul-daemon-history-", dir=os.environ.get("HISTORY_DIR"))
out = os.path.join(root, "out")
os.makedirs(out)
daemon = Daemon(haul, root, out, "--max-concurrent-downloads", "16")
call, post, rss = daemon.call, daemon.post, daemon.rss


def store_bytes():
    return sum(os.path.getsize(os.path.join(daemon.state, name)) for name in os.listdir(daemon.state)
               if name.startswith("haul.sqlite"))


try:
    start = time.monotonic()
    for first in range(0, count, batch):
        calls = [{"jsonrpc": "2.0", "id": n, "method": "aria2.addUri",
                  "params": [daemon.token, [urls[n % len(urls)]], {"out": f"h{n:06d}.bin"}]}
                 for n in range(first, min(count, first + batch))]
        answers = post(calls)
        failed = [a for a in answers if "error" in a]
        if failed:
            sys.exit(f"addUri failed: {failed[0]['error']}")
        # Keep the queue short, as a client adding over time would.
        while int(call("aria2.getGlobalStat")["numWaiting"]) > 4 * batch:
            time.sleep(0.05)
    while True:
        stat = call("aria2.getGlobalStat")
        if stat["numActive"] == "0" and stat["numWaiting"] == "0":
            break
        time.sleep(0.1)
    elapsed = time.monotonic() - start
    done = len(os.listdir(out))
    latencies = []
    for _ in range(20):
        begin = time.perf_counter()
        stopped = call("aria2.tellStopped", 0, 1000)
        latencies.append(time.perf_counter() - begin)
    errors = [s for s in stopped if s.get("status") != "complete"]
    print("| measure | value |")
    print("|---|---|")
    print(f"| downloads completed through aria2.addUri | {done} of {count} in {elapsed:.1f} s ({len(errors)} of the kept not complete) |")
    print(f"| stopped results kept (tellStopped 0 1000) | {len(stopped)} |")
    print(f"| tellStopped(0, 1000) answer time, median / worst of 20 | {statistics.median(latencies) * 1000:.1f} ms / {max(latencies) * 1000:.1f} ms |")
    print(f"| store on disk (haul.sqlite with its WAL) | {store_bytes() / 2**20:.1f} MiB |")
    print(f"| daemon resident memory | {rss() / 2**20:.1f} MiB |")
finally:
    daemon.stop()
    shutil.rmtree(root, ignore_errors=True)
