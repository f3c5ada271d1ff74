import Foundation
@testable import Haul
import HaulTestSupport
import Testing

/// What only the PostgreSQL store has: its URL, its migrations, and its server being away.
@Suite("PostgreSQL store", .timeLimit(.minutes(3)))
struct PostgresStoreTests {
    /// A URL's parts and libpq's defaults are read; the password comes from the URL or
    /// `PGPASSWORD` and never shows in the description.
    @Test func urlsAreReadWithLibpqsDefaults() throws {
        let full = try PostgresAddress(parsing: "postgresql://u:p%40ss@db.example:6543/store?sslmode=require", environment: [:])
        #expect(full == PostgresAddress(host: "db.example", port: 6543, user: "u", password: "p@ss", database: "store", tls: .require))
        #expect(full.description == "postgresql://u@db.example:6543/store")

        let short = try PostgresAddress(parsing: "postgres://haul@10.0.0.5", environment: ["PGPASSWORD": "env"])
        #expect(short == PostgresAddress(host: "10.0.0.5", port: 5432, user: "haul", password: "env", database: "haul", tls: .prefer))

        let v6 = try PostgresAddress(parsing: "postgresql://haul@[::1]:5433/x?sslmode=disable", environment: [:])
        #expect(v6.host == "::1")
        #expect(v6.description == "postgresql://haul@[::1]:5433/x")
    }

    /// A URL Haul cannot use is `.invalidURL`, saying what is wrong, without its password.
    @Test(arguments: [
        ("postgresql://db.example/x", "no user name"),
        ("postgresql://u@/x", "no host"),
        ("postgresql://u:secret@h/a/b", "must be a database name"),
        ("postgresql://u@h/x?sslmode=verify-full", "sslmode"),
        ("postgresql://u@h/x?application_name=a", "unknown parameter"),
        ("mysql://u@h/x", "not a URL"),
    ])
    func unusableURLsAreClearErrors(_ text: String, _ why: String) {
        let error = #expect(throws: HaulError.self) { try PostgresAddress(parsing: text, environment: [:]) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message.contains(why) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("secret") == false)
    }

    /// Migrations are recorded once, however many processes open the database at once, and a
    /// database migrated by a newer Haul is refused.
    @Test func migrationsRunOnceAndANewerSchemaIsRefused() async throws {
        let cluster = try await PostgresCluster.shared()
        let url = try await cluster.makeDatabase()
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        let address = try PostgresAddress(parsing: url)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { _ = try await PostgresStore.open(address: address, stateDirectory: nil, waitingUpTo: .zero) }
            }
            try await group.waitForAll()
        }
        #expect(try await cluster.psql("SELECT string_agg(version::text, ',') FROM haul.schema_version", database: database)
                == (1...PostgresSchema.versions.count).map(String.init).joined(separator: ","))

        _ = try await cluster.psql("INSERT INTO haul.schema_version VALUES (999, 0)", database: database)
        await #expect {
            _ = try await PostgresStore.open(address: address, stateDirectory: nil, waitingUpTo: .zero)
        } throws: { error in
            (error as? HaulError)?.message.contains("newer version of Haul") == true
        }
    }

    /// A server that is not there is `.connectionFailed` naming the database, once the wait
    /// given has passed.
    @Test func unreachableServerIsConnectionFailed() async throws {
        let port = try LoopbackPort.free()
        let address = PostgresAddress(host: "127.0.0.1", port: port, user: "haul", database: "gone", tls: .disable)
        let started = ContinuousClock.now
        await #expect {
            _ = try await PostgresStore.open(address: address, stateDirectory: nil, waitingUpTo: .milliseconds(600))
        } throws: { error in
            let error = error as? HaulError
            return error?.code == .connectionFailed && error?.message.contains(address.description) == true
        }
        #expect(ContinuousClock.now - started >= .milliseconds(600), "it waited before giving up")
    }
}
