import Testing
@testable import HaulCLI

/// Parsing aria2-style input files (`-i`).
@Suite struct InputFileTests {
    /// URLs, comments, blank lines, CRLF line ends and indented option lines parse into entries with their options attached to the URL above.
    @Test func parsesURLsAndIndentedOptions() throws {
        let text = "# list\r\n\r\nhttp://a/1\r\n  out=one.bin\r\n\tdir=sub\r\n  checksum=sha-256=ab\r\n  header=X-A: b=c\r\n   # indented comment\r\nhttp://a/2\n"
        let entries = try InputFile.parse(text, source: "list")
        #expect(entries == [
            InputEntry(url: "http://a/1", line: 3, outputName: "one.bin", directory: "sub", checksums: ["sha-256=ab"], headers: ["X-A: b=c"]),
            InputEntry(url: "http://a/2", line: 9),
        ])
    }

    /// An option before any URL, an option without `=`, an unknown option and a line with two URLs are usage errors naming the line.
    @Test(arguments: [
        ("  out=x\nhttp://a/1", "list:1"),
        ("http://a/1\n  out", "list:2"),
        ("http://a/1\n  select-file=1", "list:2"),
        ("http://a/1\thttp://b/1", "list:1"),
    ])
    func rejectsMalformedLines(text: String, location: String) {
        #expect {
            try InputFile.parse(text, source: "list")
        } throws: { error in
            guard let failure = error as? CommandFailure else { return false }
            return failure.status == .usage && failure.message.hasPrefix(location)
        }
    }
}
