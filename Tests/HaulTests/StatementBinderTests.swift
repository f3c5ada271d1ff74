import Foundation
import GRDB
import Testing
@testable import Haul

@Suite("Statement binder")
struct StatementBinderTests {
    private static func table() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (n, i, d, empty, nul, blob, emptyBlob)")
        }
        return queue
    }

    @Test func everyKindOfValueComesBackAsBound() throws {
        let queue = try Self.table()
        let values: [DatabaseValue] = [
            .null, Int64.min.databaseValue, (-0.125).databaseValue, "".databaseValue, "a\u{0}b ü".databaseValue,
            Data([0, 1, 255]).databaseValue, Data().databaseValue,
        ]
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)")
            // Twice through the same statement: the second row must not see the first's values.
            for _ in 0..<2 {
                var binder = StatementBinder(insert)
                for value in values { try binder.bind(value) }
                try binder.finish()
                try insert.execute()
            }
        }
        // The text's bytes as stored: GRDB reads text columns up to the first NUL.
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT *, CAST(nul AS BLOB) AS nulBytes FROM t") }
        #expect(rows.count == 2)
        for row in rows {
            #expect(row["n"] as DatabaseValue == .null)
            #expect(row["i"] as Int64 == Int64.min)
            #expect(row["d"] as Double == -0.125)
            // An empty text is a text, not NULL; a NUL inside a text does not end it.
            #expect(row["empty"] as String? == "")
            #expect(row["nulBytes"] as Data == Data("a\u{0}b ü".utf8))
            #expect(row["blob"] as Data == Data([0, 1, 255]))
            #expect((row["emptyBlob"] as DatabaseValue).isNull == false)
        }
    }

    @Test func tooFewOrTooManyValuesAreErrors() throws {
        let queue = try Self.table()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (n, i) VALUES (?, ?)")
            var short = StatementBinder(insert)
            try short.bind(1.databaseValue)
            #expect(throws: StoredRowError.self) { try short.finish() }

            var long = StatementBinder(insert)
            try long.bind(1.databaseValue)
            try long.bind(2.databaseValue)
            #expect(throws: StoredRowError.self) { try long.bind(3.databaseValue) }
        }
    }
}
