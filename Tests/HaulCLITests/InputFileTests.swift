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

    /// Several URLs on one line separated by tabs are mirrors of one file, as in aria2's input files; its options follow as usual.
    @Test func tabSeparatedURLsAreMirrors() throws {
        let text = "http://a/1\thttp://b/1\t\thttps://c/x/1\n  out=one.bin\nhttp://a/2\n"
        let entries = try InputFile.parse(text, source: "list")
        #expect(entries == [
            InputEntry(url: "http://a/1", mirrors: ["http://b/1", "https://c/x/1"], line: 1, outputName: "one.bin"),
            InputEntry(url: "http://a/2", line: 3),
        ])
    }

    /// An option before any URL, an option without `=`, an unknown option and two URLs separated by a space (not a tab) are usage errors naming the line.
    @Test(arguments: [
        ("  out=x\nhttp://a/1", "list:1"),
        ("http://a/1\n  out", "list:2"),
        ("http://a/1\n  select-file=1", "list:2"),
        ("http://a/1 http://b/1", "list:1"),
    ])
    func rejectsMalformedLines(text: String, location: String) {
        #expect {
            try InputFile.parse(text, source: "list")
        } throws: { error in
            guard let failure = error as? CommandFailure else { return false }
            return failure.status == .usage && failure.message.hasPrefix(location)
        }
    }

    /// Splitting on UTF-8 bytes gives the lines that splitting on newline Characters gives:
    /// CRLF once, lone CR, vertical tab, form feed, NEL, LS and PS, empty lines and a missing
    /// final newline, next to multi-byte text that shares lead bytes with NEL and LS.
    @Test(arguments: [
        "", "\n", "a", "a\nb", "a\r\nb\r\n", "a\rb\r", "\r\n\r\n", "a\r\r\nb",
        "a\u{0B}b\u{0C}c", "a\u{85}b\u{2028}c\u{2029}d", "é\n€\u{2026}\n\u{00A0}x\n🙂",
        "a\n\u{301}b", "x\r",
    ])
    func linesMatchCharacterSplit(text: String) {
        let expected = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        #expect(InputFile.lines(of: text).map(String.init) == expected)
    }

    /// The byte scan for white space in a URL agrees with Character's `isWhitespace`, for
    /// ASCII blanks and for white space beyond ASCII (no-break and ideographic spaces).
    @Test(arguments: [
        "http://a/b", "http://a/b c", "http://a/b\tc", "http://a/\u{0B}", "http://a/é",
        "http://a/b\u{00A0}c", "http://a/\u{3000}", "http://a/\u{2003}x", "🙂",
    ])
    func whitespaceScanMatchesCharacters(text: String) {
        #expect(InputFile.containsWhitespace(text) == text.contains(where: \.isWhitespace))
    }
}
