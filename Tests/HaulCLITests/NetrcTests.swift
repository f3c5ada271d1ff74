import Foundation
import Haul
import Testing
@testable import HaulCLI

/// `~/.netrc` parsing as curl reads it.
@Suite struct NetrcTests {
    /// Machines, the default entry, quoted tokens, one-line and multi-line entries, and macro
    /// bodies skipped.
    @Test func parsing() {
        let netrc = Netrc(parsing: """
            machine files.example login ann password "p w"
            macdef init
            machine evil.example login no password no

            machine Other.Example
              login bob
              password s3cret
            default login anon password guest
            """)
        #expect(netrc.entry(for: "files.example") == Netrc.Entry(login: "ann", password: "p w"))
        #expect(netrc.entry(for: "other.example") == Netrc.Entry(login: "bob", password: "s3cret"))
        #expect(netrc.entry(for: "evil.example") == Netrc.Entry(login: "anon", password: "guest"))
        #expect(netrc.machines["evil.example"] == nil)
    }

    /// Only requests without credentials of their own get the entry.
    @Test func appliesOnlyWithoutOwnCredentials() {
        let netrc = Netrc(parsing: "machine h login u password p")
        let directory = URL(fileURLWithPath: "/tmp")
        let plain = DownloadRequest(url: URL(string: "http://h/a")!, directory: directory)
        let withUser = DownloadRequest(url: URL(string: "http://x:y@h/a")!, directory: directory)
        let withHeader = DownloadRequest(url: URL(string: "http://h/a")!, directory: directory, headers: [HeaderField(name: "Authorization", value: "Bearer t")])
        let other = DownloadRequest(url: URL(string: "http://elsewhere/a")!, directory: directory)
        let applied = netrc.applied(to: [plain, withUser, withHeader, other])
        #expect(applied[0].headers == [HeaderField(name: "Authorization", value: "Basic dTpw")])
        #expect(applied[1].headers.isEmpty)
        #expect(applied[2].headers == [HeaderField(name: "Authorization", value: "Bearer t")])
        #expect(applied[3].headers.isEmpty)
    }
}
