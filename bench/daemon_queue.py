#!/usr/bin/env python3
"""Issue #6 (d): what 100,000 queued downloads cost `haul daemon`.

Starts a release daemon on a fresh state directory (TCP on a free loopback port), attaches a
session with one download slot, lets one throttled download hold that slot, then enqueues
COUNT more in one group with `haul.addGroup` (in calls of BATCH, each under the daemon's
request size bound), and reports the enqueue time, the daemon's CPU time for it (less sensitive than the wall time
to other work on the machine) and its resident memory (VmRSS) before and after. Usage: daemon_queue.py HAUL SLOW_URL [COUNT] [BATCH]
"""
import os, shutil, sys, tempfile, time
from daemon_bench import Daemon

haul, slow_url = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 5_000
root = tempfile.mkdtemp(prefix="haul-daemon-queue-")
out = os.path.join(root, "out")
os.makedirs(out)
daemon = Daemon(haul, root, out)
call, rss, cpu = daemon.call, daemon.rss, daemon.cpu
try:
    def request(url):
        return {"url": url, "directory": out, "headers": [], "checksums": [], "priority": 0,
                "conflictPolicy": "rename", "metadata": {}}

    call("haul.attach", "bench", {"maxConcurrentDownloads": 1, "groupOrder": "interleaved"})
    call("haul.add", "bench", request(slow_url))
    before = rss()
    cpu_before = cpu()
    start = time.monotonic()
    for first in range(0, count, batch):
        # Never started: the slot stays with the throttled download.
        urls = [request(f"http://127.0.0.1:9/queued/f{n}.bin") for n in range(first, min(count, first + batch))]
        call("haul.addGroup", "bench", "bulk", urls)
    enqueue = time.monotonic() - start
    enqueue_cpu = cpu() - cpu_before
    after = rss()
    listed = call("haul.group", "bench", "bulk")
    queued = len(listed["unfinished"])
    print("| measure | value |")
    print("|---|---|")
    print(f"| downloads enqueued in one group | {count} ({queued} waiting) |")
    print(f"| enqueue time ({(count + batch - 1) // batch} haul.addGroup calls of {batch}) | {enqueue:.2f} s |")
    print(f"| the daemon's CPU time for the enqueue | {enqueue_cpu:.2f} s |")
    print(f"| daemon resident memory before / after | {before / 2**20:.1f} MiB / {after / 2**20:.1f} MiB |")
    print(f"| added per queued download | {(after - before) / count:.0f} bytes |")
finally:
    daemon.stop()
    shutil.rmtree(root, ignore_errors=True)
