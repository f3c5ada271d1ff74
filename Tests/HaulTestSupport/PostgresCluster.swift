import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A temporary PostgreSQL cluster on 127.0.0.1, for the tests of the PostgreSQL store: one per
/// test process, started on first use (`shared()`), each test in a database of its own
/// (`makeDatabase()`), stopped and deleted when the test process ends, however it ends.
///
/// `initdb` and the server come from Debian's `postgresql` package (`/usr/lib/postgresql/*/bin`,
/// installed by `scripts/test` when missing). PostgreSQL refuses to run as root, and CI runs as
/// root: there the cluster's directory belongs to the `postgres` user and its programs run as
/// that user (`setpriv`). Authentication is `trust`, on loopback only; durability settings are
/// off (the tests kill daemons, never the server).
///
/// A small shell watches this process and stops the server (then deletes its directory) once
/// the process is gone, since Swift Testing has no end-of-run hook and a crashed run must not
/// leave servers behind.
public struct PostgresCluster: Sendable {
    public let port: Int
    /// The cluster's superuser (trusted on loopback).
    public let user = "haul"
    public let directory: String
    private let binaries: String

    private static let started = Started()

    /// The process's cluster, started on first call.
    public static func shared() async throws -> PostgresCluster {
        try await started.cluster()
    }

    /// A new, empty database, as a URL for `--store` / `StoreLocation`.
    public func makeDatabase() async throws -> String {
        let name = "haul_\(UInt32.random(in: 0...UInt32.max))_\(UInt32.random(in: 0...UInt32.max))"
        try await run(binaries + "/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, name], asOwner: false)
        return url(database: name)
    }

    /// `postgresql://haul@127.0.0.1:PORT/DATABASE?sslmode=disable`.
    public func url(database: String) -> String {
        "postgresql://\(user)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// Runs `psql` on `database` with `sql`, returning its unaligned output.
    public func psql(_ sql: String, database: String) async throws -> String {
        try await run(binaries + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], asOwner: false)
    }

    private actor Started {
        private var task: Task<PostgresCluster, any Error>?

        func cluster() async throws -> PostgresCluster {
            if let task { return try await task.value }
            let task = Task { try await PostgresCluster.start() }
            self.task = task
            return try await task.value
        }
    }

    private static func start() async throws -> PostgresCluster {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw ChildProcessError("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin); run scripts/test, which installs it")
        }
        let binaries = "/usr/lib/postgresql/\(version)/bin"
        let root = try TemporaryDirectory()
        let data = root.url.appendingPathComponent("data").path
        let port = try LoopbackPort.free()
        let cluster = PostgresCluster(port: port, directory: root.path, binaries: binaries)
        if geteuid() == 0 {
            // The server's user must own its directory and be able to reach it.
            _ = try await cluster.run("/bin/chown", ["postgres:postgres", root.path], asOwner: false)
            _ = try await cluster.run("/bin/chmod", ["0700", root.path], asOwner: false)
        }
        try await cluster.run(binaries + "/initdb", [
            "-D", data, "-U", cluster.user, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions",
        ], asOwner: true)
        let server = [
            binaries + "/postgres", "-D", data, "-k", root.path, "-h", "127.0.0.1", "-p", "\(port)",
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=400",
        ]
        let owner = geteuid() == 0 ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] : []
        let quoted = (owner + server).map { "'\($0)'" }.joined(separator: " ")
        // The watcher: the server runs until this process is gone, then stops fast and its
        // files go. Checked once a second; a finished test run waits for nothing.
        let watcher = """
            \(quoted) >"\(root.path)/server.log" 2>&1 &
            server=$!
            while [ -d /proc/\(getpid()) ] && kill -0 $server 2>/dev/null; do sleep 1; done
            kill -INT $server 2>/dev/null; wait $server; rm -rf '\(root.path)'
            """
        _ = try ChildProcess(executable: "/bin/sh", arguments: ["-c", watcher])
        do {
            try await waitUntil("PostgreSQL to accept connections on port \(port)", within: .seconds(60)) {
                LoopbackPort.accepts(port)
            }
            try await waitUntil("PostgreSQL to accept logins on port \(port)", within: .seconds(60)) {
                (try? await cluster.run(binaries + "/pg_isready", ["-h", "127.0.0.1", "-p", "\(port)", "-U", cluster.user], asOwner: false)) != nil
            }
        } catch {
            let log = (try? String(contentsOfFile: root.path + "/server.log", encoding: .utf8)) ?? ""
            throw ChildProcessError("\(error); server log: \(log)")
        }
        return cluster
    }

    /// Runs a program to its end; throws with its output unless it exits 0. `asOwner`: as the
    /// cluster's owner (`postgres` when this process is root).
    @discardableResult
    private func run(_ executable: String, _ arguments: [String], asOwner: Bool) async throws -> String {
        let (program, all): (String, [String]) = asOwner && geteuid() == 0
            ? ("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", executable] + arguments)
            : (executable, arguments)
        let process = try ChildProcess(executable: program, arguments: all, directory: "/")
        async let output = Self.collect(process.stdout)
        async let errors = Self.collect(process.stderr)
        var status: Int32 = -1
        for await value in process.exit { status = value }
        let (out, err) = await (output, errors)
        guard ChildProcess.exitCode(status) == 0 else {
            throw ChildProcessError("\(executable) \(arguments.joined(separator: " ")) failed (status \(status)): \(err)\(out)")
        }
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func collect(_ stream: AsyncStream<Data>) async -> String {
        var data = Data()
        for await chunk in stream { data.append(chunk) }
        return String(decoding: data, as: UTF8.self)
    }
}
