import Haul

/// Reads aria2's option structs (`{"dir": "/tmp", "split": "4"}`) into `Aria2OptionValues`.
///
/// Every option given is accounted for, so that an answer "OK" means it was applied:
/// - an option Haul honours where it is given is read and checked;
/// - one Haul honours elsewhere (`out` in `changeGlobalOption`, `max-concurrent-downloads`
///   for one download, `pause` in `changeOption`) is refused, saying where it belongs;
/// - a settled option (`Aria2SettledOption`: a daemon setting such as `timeout`) passes with
///   the value Haul has and is refused with another;
/// - one of `Aria2BlindOptions` (front-ends send them unasked) is accepted and ignored;
/// - any other is refused with an error naming it, unless its value is empty (a front-end's
///   blank field asks for nothing).
///
/// A value it cannot use fails the whole call with aria2's message, followed by what was wrong,
/// and nothing is applied. A JSON number (`"split": 4`) is read as its decimal text, as aria2
/// does, and a JSON boolean as `true`/`false`; other kinds of value (objects, arrays except for
/// `header`, null) are an error, and `gid` (choosing a download's ID) is refused.
enum Aria2OptionParser {
    /// Where the options are given; each accepts a different set.
    enum Context: Sendable, Hashable {
        /// `addUri`: every per-download option, `pause` included.
        case newDownload
        /// `changeOption`: per-download options except `pause`.
        case changeDownload
        /// `changeGlobalOption`: defaults for new downloads and global limits, but not
        /// `checksum`, `out` or `pause`.
        case changeGlobal
    }

    static let perDownload: Set<String> = [
        "dir", "out", "header", "checksum", "split", "max-connection-per-server", "max-download-limit",
        "allow-overwrite", "auto-file-renaming", "referer", "user-agent",
    ]
    static let globalOnly: Set<String> = ["max-concurrent-downloads", "max-overall-download-limit"]

    static func accepts(_ name: String, in context: Context) -> Bool {
        switch context {
        case .newDownload: return perDownload.contains(name) || name == "pause" || name == "gid"
        case .changeDownload: return perDownload.contains(name)
        case .changeGlobal: return (perDownload.contains(name) || globalOnly.contains(name)) && name != "checksum" && name != "out"
        }
    }

    /// Why an option Haul honours is refused in `context`, or nil when it is not one of those.
    static func misplaced(_ name: String, in context: Context) -> String? {
        if name == "gid" { return "Haul chooses download IDs itself; leave this option out" }
        if globalOnly.contains(name) { return "it holds for all downloads: give it to changeGlobalOption" }
        if name == "pause" {
            return context == .changeDownload
                ? "it applies when a download is added; use aria2.pause or aria2.unpause"
                : "it applies when a download is added: give it to addUri"
        }
        if perDownload.contains(name) { return "it belongs to one download: give it to addUri or changeOption" }
        return nil
    }

    static func parse(
        _ options: [String: JSONValue], for context: Context, settled: [String: Aria2SettledOption] = [:]
    ) throws(JSONRPCError) -> Aria2OptionValues {
        var values = Aria2OptionValues()
        // Sorted, so that of several bad options the same one is always reported.
        for name in options.keys.sorted() {
            guard let raw = options[name] else { continue }
            guard accepts(name, in: context) else {
                try account(name, raw, in: context, settled: settled)
                continue
            }
            if name == "header" {
                values.headers = try headers(raw)
                continue
            }
            guard let text = optionText(raw) else {
                throw JSONRPCError.invalidParams("option '\(name)' must be a string or a number, got \(raw.kindDescription)")
            }
            try read(name, text, into: &values)
        }
        return values
    }

    /// An option given where Haul does not apply it: passes (settled with Haul's value, blind,
    /// or empty) or is refused, naming it.
    private static func account(
        _ name: String, _ raw: JSONValue, in context: Context, settled: [String: Aria2SettledOption]
    ) throws(JSONRPCError) {
        // A blank field asks for nothing, wherever it is given.
        if optionText(raw)?.isEmpty == true { return }
        if let reason = misplaced(name, in: context) { throw problem(name, reason) }
        if let option = settled[name] {
            guard let text = optionText(raw) else {
                throw JSONRPCError.invalidParams("option '\(name)' must be a string or a number, got \(raw.kindDescription)")
            }
            guard option.matches(text) else {
                let has = option.value.isEmpty ? "none" : "'\(option.value)'"
                throw problem(name, "Haul has \(has) and does not change it over RPC: \(option.howToChange)")
            }
            return
        }
        if Aria2BlindOptions.names.contains(name) { return }
        throw problem(name, "Haul does not support this option, so nothing was applied (see the README's table of aria2's options)")
    }

    /// Reads one option Haul honours. An empty `out`, `checksum`, `referer` or `user-agent` is
    /// "not given" (a front-end's blank field), not a value.
    private static func read(_ name: String, _ text: String, into values: inout Aria2OptionValues) throws(JSONRPCError) {
        if text.isEmpty, ["out", "checksum", "referer", "user-agent"].contains(name) { return }
        switch name {
        case "dir":
            guard !text.isEmpty else { throw problem(name, "a directory path is required") }
            values.dir = text
        case "out": values.out = try fileName(text)
        case "checksum":
            do { values.checksum = try Checksum(parsing: text) } catch { throw problem(name, error.message) }
        case "split": values.split = try integer(name, text, in: DaemonTransferOptions.splitRange)
        case "max-connection-per-server": values.maxConnectionPerServer = try integer(name, text, in: 1...DaemonTransferOptions.connectionCeiling)
        case "max-concurrent-downloads": values.maxConcurrentDownloads = try integer(name, text, in: 1...100_000)
        case "max-download-limit": values.maxDownloadLimit = try speed(name, text)
        case "max-overall-download-limit": values.maxOverallDownloadLimit = try speed(name, text)
        case "allow-overwrite": values.allowOverwrite = try boolean(name, text)
        case "auto-file-renaming": values.autoFileRenaming = try boolean(name, text)
        case "pause": values.pause = try boolean(name, text)
        case "referer": values.referer = try headerValue(name, text)
        case "user-agent": values.userAgent = try headerValue(name, text)
        case "gid": throw problem(name, "Haul chooses download IDs itself; leave this option out")
        default: break
        }
    }

    /// An option value as text: a string as it is, a number as its decimal text (a whole
    /// double such as `2.0` as `2`; another double keeps its fraction, which the integer
    /// options then refuse), a boolean as `true` or `false` (webui-aria2 sends its defaults so).
    static func optionText(_ raw: JSONValue) -> String? {
        switch raw {
        case .string(let text): return text
        case .bool(let flag): return String(flag)
        case .integer(let number): return String(number)
        case .double(let number):
            guard number.isFinite else { return nil }
            if number == number.rounded(), let whole = Int64(exactly: number) { return String(whole) }
            return String(number)
        default: return nil
        }
    }

    /// aria2's message for a value it cannot use, followed by the reason.
    static func problem(_ name: String, _ reason: String) -> JSONRPCError {
        .failed("We encountered a problem while processing the option '--\(name)': \(reason)")
    }

    /// `out` is one file name: Haul places files directly in `dir`, so a path (and with it any
    /// way out of `dir`) is refused here, before anything is added.
    static func fileName(_ text: String) throws(JSONRPCError) -> String {
        guard !text.isEmpty, text != ".", text != ".." else {
            throw problem("out", "'\(text)' cannot be used as a file name")
        }
        guard !text.contains("/"), !text.contains("\0") else {
            throw problem("out", "'\(text)' must be a file name without '/'; use 'dir' to choose a directory inside the download directory")
        }
        return text
    }

    /// `header` is an array of `Name: value` strings, or one string of them one per line (as
    /// aria2 lists it, so that a listed value can be given back); empty lines are skipped, so
    /// `""` is no header.
    static func headers(_ raw: JSONValue) throws(JSONRPCError) -> [HeaderField] {
        let lines: [JSONValue]
        switch raw {
        case .string(let text): lines = text.split(whereSeparator: \.isNewline).map { .string(String($0)) }
        case .array(let elements): lines = elements
        default: throw JSONRPCError.invalidParams("option 'header' must be a string or an array of strings, got \(raw.kindDescription)")
        }
        var fields: [HeaderField] = []
        for line in lines {
            guard let text = line.stringValue else {
                throw JSONRPCError.invalidParams("option 'header' must hold strings, and holds \(line.kindDescription)")
            }
            if text.isEmpty { continue }
            do { fields.append(try HeaderField(parsing: text)) } catch { throw problem("header", error.message) }
        }
        return fields
    }

    static func integer(_ name: String, _ text: String, in range: ClosedRange<Int>) throws(JSONRPCError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw problem(name, "expected a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    static func boolean(_ name: String, _ text: String) throws(JSONRPCError) -> Bool {
        switch text {
        case "true": return true
        case "false": return false
        default: throw problem(name, "expected 'true' or 'false', got '\(text)'")
        }
    }

    /// Bytes per second: a whole number, optionally followed by `K` or `M` (1K = 1024).
    static func speed(_ name: String, _ text: String) throws(JSONRPCError) -> Int64 {
        try bytes(name, text)
    }

    /// A number of bytes: a whole number, optionally followed by `K` or `M` (1K = 1024), as
    /// aria2 reads sizes and speeds.
    static func bytes(_ name: String, _ text: String) throws(JSONRPCError) -> Int64 {
        var digits = Substring(text)
        var unit: Int64 = 1
        switch digits.last {
        case "K", "k": unit = 1024; digits = digits.dropLast()
        case "M", "m": unit = 1024 * 1024; digits = digits.dropLast()
        default: break
        }
        guard let number = Int64(digits), number >= 0 else {
            throw problem(name, "expected bytes per second such as 0, 500K or 2M, got '\(text)'")
        }
        let (value, overflow) = number.multipliedReportingOverflow(by: unit)
        guard !overflow else { throw problem(name, "'\(text)' is too large") }
        return value
    }

    static func headerValue(_ name: String, _ text: String) throws(JSONRPCError) -> String {
        guard !text.isEmpty, !text.contains(where: \.isNewline) else {
            throw problem(name, "expected a single line of text")
        }
        return text
    }
}
