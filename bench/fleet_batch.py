#!/usr/bin/env python3
"""Issue 29, item 6: the seeds' batch (30 groups, 5,010 shards of 64 KiB from nginx on
loopback) through release `haul daemon`s: one with its SQLite store, one with a PostgreSQL
store, and three sharing one PostgreSQL store and one download directory.

Each run starts the daemons afresh (a new state directory each, a new database), attaches one
session with SLOTS downloads at once (counted across the fleet), adds the 30 groups through the
first daemon and long-polls that daemon's events until every group's `groupCompleted` arrived.
Reported per configuration (medians of RUNS): wall time from the first add to the last group's
end, the daemons' CPU (user + system, summed), and the store's cost per download: for
PostgreSQL the server's CPU and its transactions and row changes (pg_stat_database) divided by
5,010; for SQLite the store runs inside the daemon, so its cost is part of the daemon's CPU.

Usage: fleet_batch.py HAUL [RUNS] [CONFIGS]   CONFIGS: comma-separated of sqlite,pg1,pg3
env: SLOTS (default 16), FLEET_SLOTS (each daemon's own cap in a fleet, default = SLOTS)
"""
import os, random, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time
from daemon_bench import Daemon

haul = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
configs = (sys.argv[3] if len(sys.argv) > 3 else "sqlite,pg1,pg3").split(",")
slots = int(os.environ.get("SLOTS", "16"))
fleet_slots = os.environ.get("FLEET_SLOTS", str(slots))
SHARD = 64 * 1024
TICKS = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_sizes():
    """30 groups of 100 to 234 shards, 5,010 in all, the same every run."""
    rng, sizes = random.Random(29), [167] * 30
    for i in range(15):
        d = rng.randint(0, 67)
        sizes[2 * i] += d
        sizes[2 * i + 1] -= d
    assert sum(sizes) == 5010
    return sizes


def cpu_seconds(pid, children=False):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICKS


class Nginx:
    def __init__(self, root):
        self.dir = tempfile.mkdtemp(prefix="haul-fleet-nginx-")
        self.port = free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 2; pid {self.dir}/nginx.pid; error_log {self.dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; keepalive_requests 100000; default_type application/octet-stream;
  client_body_temp_path {self.dir}/b; proxy_temp_path {self.dir}/p; fastcgi_temp_path {self.dir}/f;
  uwsgi_temp_path {self.dir}/u; scgi_temp_path {self.dir}/s;
  server {{ listen 127.0.0.1:{self.port}; root {root}; }} }}
""")
        subprocess.run(["nginx", "-c", conf, "-p", self.dir], check=True)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        sys.exit("nginx did not start")

    def stop(self):
        with open(os.path.join(self.dir, "nginx.pid")) as f:
            os.kill(int(f.read()), 15)
        shutil.rmtree(self.dir, ignore_errors=True)


class Postgres:
    """A temporary cluster on 127.0.0.1 with the server's default durability."""

    def __init__(self):
        bins = sorted(d for d in os.listdir("/usr/lib/postgresql"))
        self.bin = f"/usr/lib/postgresql/{bins[-1]}/bin"
        self.root = tempfile.mkdtemp(prefix="haul-fleet-pg-")
        self.port = free_port()
        self.owner = []
        if os.getuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self.owner = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
        subprocess.run(self.owner + [f"{self.bin}/initdb", "-D", f"{self.root}/data", "-U", "haul", "--auth=trust",
                                     "-E", "UTF8", "--no-sync"], check=True, stdout=subprocess.DEVNULL, cwd="/")
        subprocess.run(self.owner + [f"{self.bin}/pg_ctl", "-D", f"{self.root}/data", "-l", f"{self.root}/server.log", "-w",
                                     "-o", f"-h 127.0.0.1 -p {self.port} -k {self.root} -c max_connections=200", "start"],
                       check=True, stdout=subprocess.DEVNULL, cwd="/")
        with open(f"{self.root}/data/postmaster.pid") as f:
            self.pid = int(f.readline())

    def sql(self, database, statement):
        return subprocess.run([f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "haul", "-X", "-q", "-A",
                               "-t", "-d", database, "-c", statement], check=True, capture_output=True, text=True).stdout.strip()

    def url(self, database):
        return f"postgresql://haul@127.0.0.1:{self.port}/{database}"

    def server_cpu(self):
        """The postmaster and its children, live and ended."""
        total = cpu_seconds(self.pid, children=True)
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                    if ppid == self.pid:
                        total += cpu_seconds(int(entry))
                except (OSError, ValueError, IndexError):
                    pass
        return total

    def counters(self, database):
        row = self.sql("postgres", "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted "
                                   f"FROM pg_stat_database WHERE datname = '{database}'")
        commits, rows = row.split("|")
        return int(commits), int(rows)

    def stop(self):
        subprocess.run(self.owner + [f"{self.bin}/pg_ctl", "-D", f"{self.root}/data", "-m", "fast", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
        shutil.rmtree(self.root, ignore_errors=True)


def one_run(config, base, postgres, number):
    root = tempfile.mkdtemp(prefix=f"haul-fleet-{config}-")
    out = os.path.join(root, "out")
    os.makedirs(out)
    count = 3 if config == "pg3" else 1
    extra = []
    database = None
    if config != "sqlite":
        database = f"run{number}_{config}"
        postgres.sql("postgres", f"CREATE DATABASE {database}")
        extra = ["--store", postgres.url(database)]
        if config == "pg3":
            extra += ["--fleet-slots", fleet_slots]
    daemons = [Daemon(haul, os.path.join(root, f"d{i}"), out, *extra) for i in range(count)]
    try:
        first = daemons[0]
        for daemon in daemons:
            daemon.call("haul.attach", "seeds", {"maxConcurrentDownloads": slots, "groupOrder": "interleaved"})
        before_counters = postgres.counters(database) if database else None
        before_server = postgres.server_cpu() if database else 0
        before_cpu = sum(cpu_seconds(d.process.pid) for d in daemons)
        start = time.monotonic()
        index = 0
        for group in range(30):
            os.makedirs(os.path.join(out, f"g{group}"))
        for group, size in enumerate(group_sizes()):
            requests = [{"url": f"{base}/s{(index + i) % 5010}.bin", "directory": os.path.join(out, f"g{group}"),
                         "headers": [], "checksums": [], "priority": 0, "conflictPolicy": "rename", "metadata": {}}
                        for i in range(size)]
            index += size
            first.call("haul.addGroup", "seeds", f"g{group}", requests)
        ended, after = set(), 0
        while len(ended) < 30:
            batch = first.call("haul.events", "seeds", after, 1000, 10000)
            for event in batch["events"]:
                after = event["sequence"]
                if event["kind"] == "groupCompleted":
                    # In a fleet the event written by the completing transaction carries no lists.
                    failed, canceled = event.get("failed", []), event.get("canceled", [])
                    if failed or canceled:
                        sys.exit(f"{config}: group {event['group']} ended with {len(failed)} failed and {len(canceled)} canceled")
                    ended.add(event["group"])
            if batch["events"]:
                first.call("haul.acknowledge", "seeds", after)
        elapsed = time.monotonic() - start
        cpu = sum(cpu_seconds(d.process.pid) for d in daemons) - before_cpu
        def count():
            return sum(len([n for n in os.listdir(os.path.join(out, d)) if not n.startswith(".")]) for d in os.listdir(out))
        placed = count()
        if placed != 5010:
            print(f"{config}: {placed} of 5,010 files in place when the last group's event arrived", file=sys.stderr)
            for _ in range(100):
                time.sleep(0.1)
                placed = count()
                if placed == 5010:
                    print(f"{config}: all in place {time.monotonic() - start - elapsed:.1f} s later", file=sys.stderr)
                    break
        if placed != 5010:
            sys.exit(f"{config}: {placed} files placed of 5,010")
        result = {"wall": elapsed, "cpu": cpu}
        if database:
            commits, rows = postgres.counters(database)
            result["server"] = postgres.server_cpu() - before_server
            result["commits"] = commits - before_counters[0]
            result["rows"] = rows - before_counters[1]
        return result
    finally:
        for daemon in daemons:
            daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


def main():
    # Stopped by `timeout` or Ctrl-C, it still stops its daemons, nginx and PostgreSQL (the
    # `finally` blocks): a cluster left running keeps its semaphores, and the next temporary
    # cluster on the machine (the test suite's) could not start.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    shards = tempfile.mkdtemp(prefix="haul-fleet-shards-")
    os.chmod(shards, 0o755)  # nginx's workers run as another user
    for i in range(5010):
        with open(os.path.join(shards, f"s{i}.bin"), "wb") as f:
            f.write(random.Random(i).randbytes(SHARD))
    nginx = Nginx(shards)
    postgres = Postgres() if any(c != "sqlite" for c in configs) else None
    results = {config: [] for config in configs}
    try:
        for number in range(runs):
            for config in configs:
                results[config].append(one_run(config, f"http://127.0.0.1:{nginx.port}", postgres, number))
    finally:
        nginx.stop()
        if postgres:
            postgres.stop()
        shutil.rmtree(shards, ignore_errors=True)
    load = open("/proc/loadavg").read().split()[:3]
    print(f"seeds' batch: 30 groups, 5,010 × 64 KiB, {slots} at once; {os.cpu_count()} cores, load {' '.join(load)}; "
          f"medians of {runs}")
    print("| daemons, store | wall s | daemons' CPU s | store server CPU ms / download | transactions / download | row changes / download |")
    print("|---|---|---|---|---|---|")
    names = {"sqlite": "1, SQLite", "pg1": "1, PostgreSQL", "pg3": "3, PostgreSQL, one directory"}
    for config in configs:
        rows = results[config]
        median = lambda key: statistics.median(r[key] for r in rows)
        if config == "sqlite":
            store = "(in the daemon's CPU) | – | –"
        else:
            store = f"{median('server') * 1000 / 5010:.3f} | {median('commits') / 5010:.2f} | {median('rows') / 5010:.2f}"
        print(f"| {names[config]} | {median('wall'):.2f} | {median('cpu'):.2f} | {store} |")


main()
