#!/usr/bin/env python3
"""Issue 26: a batch through the daemon against the same batch through `haul get`.

Starts a release daemon on a fresh state directory, attaches a session with 16 slots, sends
the list as one `haul.addGroup`, and waits (long-polling `haul.events`) for the group's
`groupCompleted` event; the time from the call to that event is the batch's. Then runs
`haul get -q -j 16` on the same list with a fresh state directory. RUNS rounds, taking turns;
medians. Usage: daemon_batch.py HAUL LIST [RUNS]
"""
import os, shutil, statistics, subprocess, sys, tempfile, time
from daemon_bench import Daemon

haul, list_path = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
urls = [line.strip() for line in open(list_path) if line.strip()]


def daemon_run():
    root = tempfile.mkdtemp(prefix="haul-daemon-batch-")
    out = os.path.join(root, "out")
    os.makedirs(out)
    daemon = Daemon(haul, root, out)
    try:
        daemon.call("haul.attach", "bench", {"maxConcurrentDownloads": 16, "groupOrder": "interleaved"})
        requests = [{"url": url, "directory": out, "headers": [], "checksums": [], "priority": 0,
                     "conflictPolicy": "rename", "metadata": {}} for url in urls]
        start = time.monotonic()
        daemon.call("haul.addGroup", "bench", "batch", requests)
        after = 0
        while True:
            batch = daemon.call("haul.events", "bench", after, 1000, 10000)
            events = batch["events"]
            if events:
                after = events[-1]["sequence"]
                daemon.call("haul.acknowledge", "bench", after)
            if any(event["kind"] == "groupCompleted" for event in events):
                break
        elapsed = time.monotonic() - start
        placed = len([name for name in os.listdir(out) if not name.startswith(".")])
        if placed != len(urls):
            sys.exit(f"the daemon placed {placed} files of {len(urls)}")
        return elapsed
    finally:
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


def get_run():
    root = tempfile.mkdtemp(prefix="haul-get-batch-")
    try:
        start = time.monotonic()
        subprocess.run([haul, "get", "-q", "-j", "16", "--state-dir", os.path.join(root, "state"), "-d",
                        os.path.join(root, "out"), "-i", list_path], check=True)
        return time.monotonic() - start
    finally:
        shutil.rmtree(root, ignore_errors=True)


daemon_times, get_times = [], []
for _ in range(runs):
    daemon_times.append(daemon_run())
    get_times.append(get_run())
daemon_median, get_median = statistics.median(daemon_times), statistics.median(get_times)
print("| measure | value |")
print("|---|---|")
print(f"| haul.addGroup of {len(urls)} to completion (median of {runs}) | {daemon_median:.2f} s |")
print(f"| haul get -q -j 16 of the same list (whole process) | {get_median:.2f} s |")
print(f"| daemon ÷ haul get | {daemon_median / get_median:.2f} |")
