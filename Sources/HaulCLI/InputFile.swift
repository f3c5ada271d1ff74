import Foundation

/// One download listed in an input file (`-i`), with the aria2-style options indented below it.
struct InputEntry: Sendable, Hashable {
    var url: String
    /// Further URLs of the same file, after the first on its line, separated by tabs.
    var mirrors: [String] = []
    /// 1-based line of the URL, for messages.
    var line: Int
    /// `out=NAME`
    var outputName: String?
    /// `dir=DIR`
    var directory: String?
    /// `checksum=TYPE=HEX`, unparsed.
    var checksums: [String] = []
    /// `header=Name: value`, unparsed.
    var headers: [String] = []
    /// `split=N`, unparsed.
    var split: String?
    /// `max-download-limit=RATE`, unparsed.
    var maxDownloadLimit: String?
}

/// Parses aria2's input-file format, so that lists written for `aria2c -i` work unchanged:
///
/// ```
/// # comment
/// https://example.com/a.iso
///   out=debian.iso
///   checksum=sha-256=9f86d0…
/// https://example.com/b.bin	https://mirror.example.org/b.bin
///   split=4
///   max-download-limit=2M
/// ```
///
/// A line starting with whitespace is an option for the URL above it. Several URLs on one line,
/// separated by tabs, are mirrors of one file (as in aria2). Unknown options are
/// errors rather than silently ignored: a typo must not download the wrong thing.
enum InputFile {
    /// The options Haul understands on indented lines.
    static let optionNames = ["out", "dir", "checksum", "header", "split", "max-download-limit"]

    /// `source` names the file in messages (`-` for standard input).
    static func parse(_ text: String, source: String) throws(CommandFailure) -> [InputEntry] {
        var entries: [InputEntry] = []
        for (index, line) in lines(of: text).enumerated() {
            let lineNumber = index + 1
            if let url = plainURL(line) {
                entries.append(InputEntry(url: url, line: lineNumber))
                continue
            }
            let content = line.trimmingBlanks()
            if content.isEmpty || content.hasPrefix("#") { continue }
            let location = "\(source):\(lineNumber)"
            if line.first?.isWhitespace == true {
                guard !entries.isEmpty else {
                    throw .usage("\(location): option '\(content)' comes before any URL")
                }
                try apply(option: content, to: &entries[entries.count - 1], at: location)
            } else {
                let urls = content.split(separator: "\t").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
                guard let url = urls.first, !urls.contains(where: containsWhitespace) else {
                    throw .usage("\(location): one URL per line, or mirrors of one file separated by tabs: '\(content)'")
                }
                entries.append(InputEntry(url: url, mirrors: Array(urls.dropFirst()), line: lineNumber))
            }
        }
        return entries
    }

    /// The line as a URL when it is nothing else: printable ASCII without blanks, not a
    /// comment. What the general rules below make of such a line is the same text; taking it
    /// as it is spares a list of 5,000 URLs the trimming, splitting and messages made for
    /// each line (the run that finds every file in place spent 9% of its time here).
    static func plainURL(_ line: Substring) -> String? {
        var bytes = line.utf8.makeIterator()
        guard let first = bytes.next(), first != UInt8(ascii: "#"), (0x21...0x7E).contains(first) else { return nil }
        while let byte = bytes.next() {
            guard (0x21...0x7E).contains(byte) else { return nil }
        }
        return String(line)
    }

    /// Whether `text` holds white space. ASCII text is checked byte by byte: taking 100,000
    /// URLs apart into Characters cost more than the rest of parsing the list.
    static func containsWhitespace(_ text: String) -> Bool {
        for byte in text.utf8 {
            if byte >= 0x80 { return text.contains(where: \.isWhitespace) }
            if byte == 0x20 || (0x09...0x0D).contains(byte) { return true }
        }
        return false
    }

    /// The lines of `text`, split where a Character is a newline ("\r\n" counts once, so files
    /// written on Windows split correctly too), empty lines kept so that numbers stay right.
    ///
    /// Scans UTF-8 bytes rather than Characters: a list of 100,000 URLs is split in
    /// milliseconds instead of being broken into grapheme clusters first. Grapheme rules always
    /// break around a newline, so splitting on newline scalars gives the same lines.
    static func lines(of text: String) -> [Substring] {
        let bytes = text.utf8
        var lines: [Substring] = []
        var start = bytes.startIndex
        var index = start
        while index != bytes.endIndex {
            let byte = bytes[index]
            var separatorEnd: String.Index?
            switch byte {
            case 0x0A, 0x0B, 0x0C:
                separatorEnd = bytes.index(after: index)
            case 0x0D:
                let next = bytes.index(after: index)
                separatorEnd = next != bytes.endIndex && bytes[next] == 0x0A ? bytes.index(after: next) : next
            case 0xC2:
                // U+0085 NEXT LINE
                let next = bytes.index(after: index)
                if next != bytes.endIndex, bytes[next] == 0x85 { separatorEnd = bytes.index(after: next) }
            case 0xE2:
                // U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR
                let second = bytes.index(after: index)
                if second != bytes.endIndex, bytes[second] == 0x80 {
                    let third = bytes.index(after: second)
                    if third != bytes.endIndex, bytes[third] == 0xA8 || bytes[third] == 0xA9 {
                        separatorEnd = bytes.index(after: third)
                    }
                }
            default:
                break
            }
            if let end = separatorEnd {
                lines.append(text[start..<index])
                start = end
                index = end
            } else {
                index = bytes.index(after: index)
            }
        }
        lines.append(text[start..<bytes.endIndex])
        return lines
    }

    private static func apply(option: String, to entry: inout InputEntry, at location: String) throws(CommandFailure) {
        guard let equals = option.firstIndex(of: "=") else {
            throw .usage("\(location): an option is written name=value, got '\(option)'")
        }
        let name = option[..<equals].trimmingBlanks().lowercased()
        let value = option[option.index(after: equals)...].trimmingBlanks()
        switch name {
        case "out": entry.outputName = value
        case "dir": entry.directory = value
        case "checksum": entry.checksums.append(value)
        case "header": entry.headers.append(value)
        case "split": entry.split = value
        case "max-download-limit": entry.maxDownloadLimit = value
        default:
            throw .usage("\(location): unknown option '\(name)'; Haul understands \(optionNames.joined(separator: ", "))")
        }
    }
}

