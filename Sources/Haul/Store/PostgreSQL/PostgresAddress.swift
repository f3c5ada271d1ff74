import Foundation

/// A PostgreSQL server and database, from a URL in libpq's form:
/// `postgresql://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`.
///
/// Defaults as libpq's: port 5432, the database named like the user, TLS when the server offers
/// it (`prefer`). A password may come from `PGPASSWORD` instead of the URL (which shows in
/// `ps`); `description` never shows it.
package struct PostgresAddress: Sendable, Hashable, CustomStringConvertible {
    package enum TLSMode: String, Sendable, Hashable {
        case disable, prefer, require
    }

    package var host: String
    package var port: Int
    package var user: String
    package var password: String?
    package var database: String
    package var tls: TLSMode

    package init(host: String, port: Int = 5432, user: String, password: String? = nil, database: String? = nil, tls: TLSMode = .prefer) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database ?? user
        self.tls = tls
    }

    static func isPostgresURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    /// Parses a URL; throws `.invalidURL` saying what is wrong with it.
    package init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(HaulError) {
        func invalid(_ why: String) -> HaulError {
            HaulError(.invalidURL, "invalid PostgreSQL URL '\(Self.redacted(text))': \(why) (expected postgresql://USER@HOST[:PORT]/DATABASE)")
        }
        guard Self.isPostgresURL(text), let components = URLComponents(string: text) else {
            throw invalid("not a URL")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("no host") }
        guard let user = components.user, !user.isEmpty else { throw invalid("no user name") }
        if let port = components.port, !(1...65535).contains(port) { throw invalid("port \(port) is out of range") }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw invalid("the path must be a database name") }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", let value?):
                guard let mode = TLSMode(rawValue: value) else { throw invalid("sslmode must be disable, prefer or require") }
                tls = mode
            default:
                throw invalid("unknown parameter '\(item.name)'")
            }
        }
        self.init(
            host: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host,
            port: components.port ?? 5432, user: user,
            password: components.password ?? environment["PGPASSWORD"],
            database: path.isEmpty ? nil : path, tls: tls)
    }

    /// `postgresql://user@host:port/database`, without the password.
    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(user)@\(shownHost):\(port)/\(database)"
    }

    /// `text` with the password of a URL replaced, for an error message.
    private static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }
}
