import Foundation
import Haul

/// `~/.netrc` as curl's `--netrc-optional` reads it: `machine HOST login USER password PASS`
/// entries (and one `default` entry for any other host), tokens separated by blanks or newlines,
/// `macdef` blocks skipped up to the next empty line. A URL with no credentials of its own (no
/// user info, no `Authorization` header, no `--http-user`) gets its host's entry as Basic
/// authorization, which, like any, is not sent past a redirect to another server.
struct Netrc: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var login: String?
        var password: String?
    }

    var machines: [String: Entry] = [:]
    var fallback: Entry?

    init(parsing text: String) {
        var tokens = Self.tokens(text)[...]
        var current: String?? = nil  // .some(nil) while reading `default`
        var entry = Entry()
        func finish() {
            guard let name = current else { return }
            if let name { if machines[name] == nil { machines[name] = entry } } else { fallback = entry }
        }
        while let token = tokens.popFirst() {
            switch token {
            case "machine":
                finish()
                current = .some(tokens.popFirst()?.lowercased())
                entry = Entry()
            case "default":
                finish()
                current = .some(nil)
                entry = Entry()
            case "login": entry.login = tokens.popFirst()
            case "password": entry.password = tokens.popFirst()
            case "account": _ = tokens.popFirst()
            default: break
            }
        }
        finish()
    }

    /// The credentials for `host`: its own entry, else the default one.
    func entry(for host: String) -> Entry? {
        machines[host.lowercased()] ?? fallback
    }

    /// `requests` with an Authorization header for each that has no credentials of its own.
    func applied(to requests: [DownloadRequest]) -> [DownloadRequest] {
        requests.map { request in
            guard let host = request.url.host, request.url.user == nil,
                  !request.headers.contains(where: { $0.name.lowercased() == "authorization" }),
                  let entry = entry(for: host), let login = entry.login
            else { return request }
            var request = request
            let token = Data("\(login):\(entry.password ?? "")".utf8).base64EncodedString()
            request.headers.append(HeaderField(name: "Authorization", value: "Basic \(token)"))
            return request
        }
    }

    /// Splits on blanks and newlines, honouring double quotes, dropping `macdef` bodies.
    private static func tokens(_ text: String) -> [String] {
        var tokens: [String] = []
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        while let line = lines.popFirst() {
            var current = ""
            var quoted = false
            var lineTokens: [String] = []
            for character in line {
                if character == "\"" { quoted.toggle(); continue }
                if !quoted, character == " " || character == "\t" || character == "\r" {
                    if !current.isEmpty { lineTokens.append(current); current = "" }
                } else {
                    current.append(character)
                }
            }
            if !current.isEmpty { lineTokens.append(current) }
            if lineTokens.first == "macdef" {
                // A macro runs to the next empty line.
                while let next = lines.popFirst(), !next.trimmingCharacters(in: .whitespaces).isEmpty {}
                continue
            }
            tokens += lineTokens
        }
        return tokens
    }

    /// `~/.netrc` (or `$NETRC`), if it exists and can be read.
    static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> Netrc? {
        let path = environment["NETRC"] ?? (environment["HOME"].map { $0 + "/.netrc" } ?? NSHomeDirectory() + "/.netrc")
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else { return nil }
        return Netrc(parsing: text)
    }
}
