import Foundation
@testable import Haul
@testable import HaulDaemon
import HaulTestSupport
import Testing

/// aria2 options without a manager: parsing, refusals, the download directory rule, and how
/// options become a request and are listed back.
@Suite struct Aria2OptionTests {
    /// Every option Haul understands is read into its typed value.
    @Test func parsesKnownOptions() throws {
        let values = try Aria2OptionParser.parse([
            "dir": "music", "out": "a.bin", "header": ["X-A: 1", "X-B: 2"],
            "checksum": .string("sha-256=" + String(repeating: "ab", count: 32)), "split": "4",
            "max-connection-per-server": "2", "max-download-limit": "500K", "allow-overwrite": "true",
            "auto-file-renaming": "false", "pause": "true", "referer": "https://example.org/", "user-agent": "agent/1",
        ], for: .newDownload)
        #expect(values.dir == "music")
        #expect(values.out == "a.bin")
        #expect(values.headers == [HeaderField(name: "X-A", value: "1"), HeaderField(name: "X-B", value: "2")])
        #expect(values.checksum?.algorithm == .sha256)
        #expect(values.split == 4)
        #expect(values.maxConnectionPerServer == 2)
        #expect(values.maxDownloadLimit == Int64(500 * 1024))
        #expect(values.allowOverwrite == true)
        #expect(values.autoFileRenaming == false)
        #expect(values.pause == true)
        #expect(values.referer == "https://example.org/")
        #expect(values.userAgent == "agent/1")
    }

    /// An option Haul does not honour, or one it honours elsewhere, fails the call with an
    /// error naming it, instead of "OK" with the option ignored.
    @Test func refusesUnsupportedAndMisplacedOptions() {
        let cases: [(String, JSONValue, Aria2OptionParser.Context, String)] = [
            ("bogus-option", "1", .newDownload, "does not support"),
            ("http-user", "bob", .newDownload, "does not support"),
            ("http-passwd", "secret", .changeDownload, "does not support"),
            ("all-proxy-user", "bob", .changeGlobal, "does not support"),
            ("max-concurrent-downloads", "9", .newDownload, "changeGlobalOption"),
            ("max-overall-download-limit", "1M", .changeDownload, "changeGlobalOption"),
            ("out", "x", .changeGlobal, "addUri or changeOption"),
            ("checksum", "md5=00", .changeGlobal, "addUri or changeOption"),
            ("pause", "true", .changeDownload, "aria2.pause"),
            ("pause", "true", .changeGlobal, "addUri"),
            ("gid", "0123456789abcdef", .changeDownload, "download IDs"),
        ]
        for (name, value, context, mention) in cases {
            #expect("\(name) in \(context)") { try Aria2OptionParser.parse([name: value, "split": "2"], for: context) } throws: { error in
                guard let error = error as? JSONRPCError else { return false }
                return error.code == 1 && error.message.contains("'--\(name)'") && error.message.contains(mention)
            }
        }
    }

    /// Options front-ends send unasked (`Aria2BlindOptions`) are accepted and ignored, and an
    /// empty value of any option asks for nothing; the rest of the call still applies.
    @Test func blindSentAndEmptyOptionsPass() throws {
        let values = try Aria2OptionParser.parse(
            ["bt-max-peers": "55", "file-allocation": "prealloc", "enable-rpc": .bool(true), "max-upload-limit": .integer(0),
             "http-user": "", "http-passwd": "", "ftp-proxy": "", "split": "3"],
            for: .changeDownload)
        #expect(values == Aria2OptionValues(split: 3))
        for context in [Aria2OptionParser.Context.newDownload, .changeDownload, .changeGlobal] {
            #expect(try Aria2OptionParser.parse(["seed-time": "10", "use-head": "true"], for: context) == Aria2OptionValues())
        }
        // Blank fields of options Haul honours are "not given"; an empty header is no header.
        let blanks = try Aria2OptionParser.parse(["out": "", "referer": "", "user-agent": "", "checksum": "", "header": ""], for: .changeDownload)
        #expect(blanks == Aria2OptionValues(headers: []))
    }

    /// The aria2 page of the documentation (`docs/aria2.md`) lists the same blind-sent options as
    /// the code, and none of them is one Haul honours or lists (which would hide a value it cannot take).
    @Test func blindListMatchesTheDocumentation() throws {
        let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/aria2.md")
        let text = try String(contentsOf: page, encoding: .utf8)
        let start = try #require(text.range(of: "The list (`Aria2BlindOptions`"))
        // The list runs to the end of its paragraph.
        let end = text.range(of: "\n\n", range: start.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        let names = text[start.upperBound..<end].split(separator: "`").enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
        #expect(Set(names) == Aria2BlindOptions.names)
        #expect(names.count == Aria2BlindOptions.names.count)
        let settled = Set(Aria2SettledOptions.of(DownloadManager.Configuration()).keys)
        let honoured = Aria2OptionParser.perDownload.union(Aria2OptionParser.globalOnly).union(["pause", "gid"])
        #expect(Aria2BlindOptions.names.isDisjoint(with: settled.union(honoured)))
    }

    /// A settled option (a daemon setting) passes with the value Haul has, in any of aria2's
    /// forms, and is refused with another, saying how to change it.
    @Test func settledOptionsPassOnlyWithTheirValue() throws {
        var configuration = DownloadManager.Configuration()
        configuration.minSegmentSize = 20 << 20
        configuration.readTimeout = .seconds(30)
        configuration.proxy = ProxySettings(
            http: ProxySettings.Proxy(host: "proxy.lan", port: 3128, username: "u", password: "p"), https: nil)
        let settled = Aria2SettledOptions.of(configuration)
        for (name, value) in [("min-split-size", "20M"), ("min-split-size", "20971520"), ("timeout", "30"),
                              ("timeout", .double(30)), ("continue", "false"), ("http-proxy", "http://proxy.lan:3128/"),
                              ("http-proxy", "http://u:p@proxy.lan:3128"), ("https-proxy", ""), ("ca-certificate", "")] as [(String, JSONValue)] {
            #expect(throws: Never.self, "\(name)=\(value)") { try Aria2OptionParser.parse([name: value], for: .changeGlobal, settled: settled) }
        }
        for (name, value, mention) in [("min-split-size", "1M", "--min-split-size"), ("timeout", "5", "--timeout"),
                                       ("continue", "true", "never appends"), ("http-proxy", "http://other:3128", "--http-proxy"),
                                       ("http-proxy", "http://u:wrong@proxy.lan:3128", "--http-proxy"),
                                       ("max-tries", "3", "--retries")] {
            #expect("\(name)=\(value)") { try Aria2OptionParser.parse([name: .string(value)], for: .changeDownload, settled: settled) } throws: { error in
                guard let error = error as? JSONRPCError else { return false }
                return error.code == 1 && error.message.contains("'--\(name)'") && error.message.contains(mention)
            }
        }
    }

    /// A SOCKS proxy is listed with its scheme, and only the same kind of proxy on the same
    /// host and port passes: an http proxy on that port is another proxy.
    @Test func socksProxyIsListedAndMatchedWithItsScheme() throws {
        var configuration = DownloadManager.Configuration()
        let socks = ProxySettings.Proxy(host: "127.0.0.1", port: 1080, kind: .socks5h)
        configuration.proxy = ProxySettings(http: socks, https: socks)
        let settled = Aria2SettledOptions.of(configuration)
        #expect(settled["all-proxy"]?.value == "socks5h://127.0.0.1:1080/")
        #expect(settled["https-proxy"]?.value == "socks5h://127.0.0.1:1080/")
        for value in ["socks5h://127.0.0.1:1080/", "socks5h://127.0.0.1:1080"] {
            #expect(throws: Never.self, "\(value)") { try Aria2OptionParser.parse(["all-proxy": .string(value)], for: .changeGlobal, settled: settled) }
        }
        for value in ["http://127.0.0.1:1080", "127.0.0.1:1080", "socks5://127.0.0.1:1080", "socks5h://127.0.0.1:1081"] {
            #expect("\(value)") { try Aria2OptionParser.parse(["all-proxy": .string(value)], for: .changeDownload, settled: settled) } throws: { error in
                (error as? JSONRPCError)?.message.contains("--all-proxy") == true
            }
        }
    }

    /// A value Haul cannot use fails with aria2's message naming the option, and why.
    @Test func badValuesNameTheOption() {
        let cases: [(String, JSONValue, String)] = [
            ("split", "abc", "--split"), ("split", "0", "--split"),
            ("max-connection-per-server", "17", "--max-connection-per-server"),
            ("max-download-limit", "10Q", "--max-download-limit"), ("max-download-limit", "-1", "--max-download-limit"),
            ("allow-overwrite", "yes", "--allow-overwrite"), ("checksum", "sha-256=abc", "--checksum"),
            ("checksum", "crc32=00000000", "--checksum"), ("header", "no colon", "--header"),
            ("referer", "a\nb", "--referer"), ("gid", "0123456789abcdef", "--gid"),
        ]
        for (name, value, mention) in cases {
            #expect { try Aria2OptionParser.parse([name: value], for: .newDownload) } throws: { error in
                guard let error = error as? JSONRPCError else { return false }
                return error.code == 1 && error.message.hasPrefix("We encountered a problem while processing the option '\(mention)': ")
            }
        }
    }

    /// Values must be strings or numbers (a header may be an array of strings): anything else
    /// is -32602.
    @Test func nonStringValuesAreInvalidParams() {
        for (name, value) in [("split", JSONValue.object([:])), ("dir", .null), ("header", .array([.integer(1)])), ("header", .integer(1))] {
            #expect { try Aria2OptionParser.parse([name: value], for: .newDownload) } throws: { error in
                (error as? JSONRPCError)?.code == -32602
            }
        }
    }

    /// A JSON number is read as its decimal text, as aria2 accepts `"split": 2`; a fraction
    /// still fails where a whole number is needed.
    @Test func numbersAreAcceptedLikeStrings() throws {
        let values = try Aria2OptionParser.parse(
            ["split": .integer(2), "max-download-limit": .integer(4096), "max-connection-per-server": .double(3)], for: .newDownload)
        #expect(values.split == 2)
        #expect(values.maxDownloadLimit == 4096)
        #expect(values.maxConnectionPerServer == 3)
        #expect { try Aria2OptionParser.parse(["split": .double(2.5)], for: .newDownload) } throws: { error in
            (error as? JSONRPCError)?.message.contains("got '2.5'") == true
        }
    }

    /// Speeds are bytes per second with optional K or M (1K = 1024).
    @Test func speedsHaveUnits() throws {
        #expect(try Aria2OptionParser.speed("s", "0") == 0)
        #expect(try Aria2OptionParser.speed("s", "1024") == 1024)
        #expect(try Aria2OptionParser.speed("s", "10K") == 10 * 1024)
        #expect(try Aria2OptionParser.speed("s", "1k") == 1024)
        #expect(try Aria2OptionParser.speed("s", "2M") == 2 * 1024 * 1024)
        #expect(throws: JSONRPCError.self) { try Aria2OptionParser.speed("s", "K") }
        #expect(throws: JSONRPCError.self) { try Aria2OptionParser.speed("s", "9999999999999999999M") }
    }

    /// `out` is a file name: paths, `.` and `..` are refused before anything is added (an
    /// empty `out` is no name, as a front-end's blank field).
    @Test func outMustBeAFileName() throws {
        for bad in ["../escape.bin", "a/b.bin", "/etc/passwd", "..", "."] {
            #expect(throws: JSONRPCError.self, "out \(bad)") { try Aria2OptionParser.parse(["out": .string(bad)], for: .newDownload) }
        }
        #expect(try Aria2OptionParser.parse(["out": "..hidden but fine"], for: .newDownload).out == "..hidden but fine")
    }

    /// `dir` resolves relative to the default directory and must stay inside the download
    /// directory, through `..` and symbolic links alike.
    @Test func dirStaysInsideTheDownloadDirectory() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let base = temporary.url
        let root = base.appendingPathComponent("root")
        let outside = base.appendingPathComponent("outside")
        for directory in [root.appendingPathComponent("music"), outside] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("link"), withDestinationURL: outside)
        let downloads = try Aria2DownloadDirectory(root)
        #expect(try downloads.resolve("music", relativeTo: downloads.url).path == root.appendingPathComponent("music").path)
        #expect(try downloads.resolve(root.path + "/music/../music", relativeTo: downloads.url).path == root.appendingPathComponent("music").path)
        #expect(try downloads.resolve(".", relativeTo: downloads.url).path == root.path)
        for escape in ["..", "../outside", "/etc", "link", "music/../../outside", outside.path, base.path + "/root-sibling"] {
            #expect("dir \(escape)") { try downloads.resolve(escape, relativeTo: downloads.url) } throws: { error in
                (error as? JSONRPCError)?.message.contains("outside the download directory") == true
            }
        }
        #expect(throws: HaulError.self) { try Aria2DownloadDirectory(base.appendingPathComponent("missing")) }
    }

    /// A new request takes the given options over the global defaults; `referer` and
    /// `user-agent` become headers, and aria2's two conflict flags become one policy.
    @Test func requestFromOptions() throws {
        var global = Aria2GlobalOptions(dir: URL(fileURLWithPath: "/tmp"))
        global.headers = [HeaderField(name: "Cookie", value: "a=1")]
        global.userAgent = "default/1"
        let values = try Aria2OptionParser.parse(["out": "f.bin", "referer": "https://r/", "allow-overwrite": "true"], for: .newDownload)
        let request = global.request(for: URL(string: "http://h/f")!, values, directory: URL(fileURLWithPath: "/tmp/x"))
        #expect(request.fileName == "f.bin")
        #expect(request.directory.path == "/tmp/x")
        #expect(request.headers == [
            HeaderField(name: "Cookie", value: "a=1"), HeaderField(name: "Referer", value: "https://r/"),
            HeaderField(name: "User-Agent", value: "default/1"),
        ])
        #expect(request.conflictPolicy == .overwrite)
        #expect(Aria2GlobalOptions.policy(allowOverwrite: false, autoFileRenaming: true) == .rename)
        #expect(Aria2GlobalOptions.policy(allowOverwrite: false, autoFileRenaming: false) == .fail)
    }

    /// Changing options changes only what is given.
    @Test func changingKeepsTheRest() throws {
        let original = DownloadRequest(
            url: URL(string: "http://h/f")!, directory: URL(fileURLWithPath: "/tmp"), fileName: "f.bin",
            headers: [HeaderField(name: "Referer", value: "old")], conflictPolicy: .fail)
        let values = try Aria2OptionParser.parse(["referer": "new", "auto-file-renaming": "true"], for: .changeDownload)
        let changed = Aria2GlobalOptions.changing(original, values, directory: nil)
        #expect(changed.fileName == "f.bin")
        #expect(changed.headers == [HeaderField(name: "Referer", value: "new")])
        #expect(changed.conflictPolicy == .rename)
        #expect(Aria2GlobalOptions.changing(original, Aria2OptionValues(), directory: nil) == original)
    }

    /// `getOption` lists a download's options as strings: headers one per line, the checksum
    /// in aria2's form, split and connections per server as they were asked, else as the
    /// defaults that gave the request its connections, else as those connections.
    @Test func listingADownload() throws {
        let checksum = try Checksum(.sha1, hex: String(repeating: "0a", count: 20))
        var request = DownloadRequest(
            url: URL(string: "http://h/f")!, directory: URL(fileURLWithPath: "/tmp"), fileName: "f.bin",
            headers: [HeaderField(name: "A", value: "1"), HeaderField(name: "B", value: "2")], checksums: [checksum])
        request.split = 2
        request.maxBytesPerSecond = 4096
        let defaults = Aria2GlobalOptions(dir: URL(fileURLWithPath: "/tmp"))
        let settled = ["timeout": Aria2SettledOption(value: "30", kind: .whole, howToChange: ""),
                       "ca-certificate": Aria2SettledOption(value: "", kind: .text, howToChange: ""),
                       "max-download-result": Aria2SettledOption(value: "9", kind: .whole, howToChange: "", perDownload: false)]
        let listing = Aria2OptionListing.download(
            request, asked: Aria2ConnectionOptions(split: 3), defaults: defaults, settled: settled, userAgent: "haul/1")
        #expect(listing == [
            "dir": "/tmp", "out": "f.bin", "header": "A: 1\nB: 2", "checksum": .string("sha-1=" + checksum.hex),
            "split": "3", "max-connection-per-server": "2", "max-download-limit": "4096",
            "allow-overwrite": "false", "auto-file-renaming": "true", "user-agent": "haul/1", "timeout": "30",
        ])
        // The listed header, given back, is the same headers (aria2 lists them one per line).
        #expect(try Aria2OptionParser.parse(["header": listing["header"]!], for: .changeDownload).headers == request.headers)
        // Nothing asked and the defaults give its connections: the defaults, as aria2 lists them.
        request.split = 1
        request.headers.append(HeaderField(name: "user-agent", value: "own/2"))
        let plain = Aria2OptionListing.download(request, asked: nil, defaults: defaults, settled: [:], userAgent: "haul/1")
        #expect(plain["user-agent"] == "own/2")
        #expect(plain["split"] == "5")
        #expect(plain["max-connection-per-server"] == "1")
    }

    /// A new download gets min(split, max-connection-per-server) connections, at most 16, and
    /// its own limit, from its options or else the defaults.
    @Test func requestConnectionsAndLimit() throws {
        let global = Aria2GlobalOptions(
            dir: URL(fileURLWithPath: "/tmp"), transfers: DaemonTransferOptions(split: 5, maxConnectionPerServer: 2, maxDownloadLimit: 1000))
        let url = URL(string: "http://h/f")!
        let directory = URL(fileURLWithPath: "/tmp")
        let plain = global.request(for: url, Aria2OptionValues(), directory: directory)
        #expect(plain.split == 2)
        #expect(plain.maxBytesPerSecond == 1000)
        let own = global.request(for: url, Aria2OptionValues(split: 40, maxConnectionPerServer: 16, maxDownloadLimit: 0), directory: directory)
        #expect(own.split == 16)
        #expect(own.maxBytesPerSecond == nil)
        #expect(global.request(for: url, Aria2OptionValues(split: 3, maxConnectionPerServer: 8), directory: directory).split == 3)
    }
}
