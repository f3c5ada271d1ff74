/// A strict reader of Prometheus's text exposition format (version 0.0.4), for the tests that
/// scrape `/metrics`: it fails on anything a Prometheus server would refuse, and on a sample
/// whose metric family no `# TYPE` line declared before it.
///
/// Lines: `# HELP name text`, `# TYPE name counter|gauge|histogram|summary|untyped`, other
/// `#` comments, blank lines, and samples `name{label="value",...} value [timestamp]`, where
/// a label value escapes `\\`, `\"` and `\n`, and the value is a float (or `+Inf`, `-Inf`,
/// `NaN`). A histogram's samples are `name_bucket` (with `le`), `name_sum` and `name_count`.
struct PrometheusText {
    struct Sample: Hashable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct Malformed: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    static let types: Set<String> = ["counter", "gauge", "histogram", "summary", "untyped"]

    /// Each family's type, by name.
    private(set) var types: [String: String] = [:]
    /// Each family's help text (unescaped), by name.
    private(set) var help: [String: String] = [:]
    private(set) var samples: [Sample] = []

    init(parsing text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else { throw Malformed(line: 0, reason: "the text does not end with a newline") }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let number = index + 1
            if line.allSatisfy(\.isWhitespace) { continue }
            if line.hasPrefix("#") {
                let words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
                guard words.count >= 3, words[1] == "HELP" || words[1] == "TYPE" else { continue }
                let name = String(words[2])
                guard Self.isMetricName(name) else { throw Malformed(line: number, reason: "bad metric name \(name)") }
                if words[1] == "HELP" {
                    let text = try Self.unescapeHelp(words.count == 4 ? words[3] : "", number: number)
                    guard help.updateValue(text, forKey: name) == nil else { throw Malformed(line: number, reason: "a second HELP for \(name)") }
                } else {
                    guard words.count == 4, Self.types.contains(String(words[3])) else { throw Malformed(line: number, reason: "bad TYPE line") }
                    guard types[name] == nil else { throw Malformed(line: number, reason: "a second TYPE for \(name)") }
                    types[name] = String(words[3])
                }
                continue
            }
            let sample = try Self.sample(line, number: number)
            guard let family = family(of: sample.name) else {
                throw Malformed(line: number, reason: "no TYPE line declares the family of \(sample.name)")
            }
            if types[family] == "histogram", sample.name == family + "_bucket", sample.labels["le"] == nil {
                throw Malformed(line: number, reason: "a bucket of \(family) without le")
            }
            samples.append(sample)
        }
    }

    /// The value of the one sample named `name` with exactly `labels`; nil when there is none.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// The declared family a sample belongs to: its own name, or a histogram's or summary's
    /// name before `_bucket`, `_sum` or `_count`.
    func family(of name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            switch types[base] {
            case "histogram": return base
            case "summary" where suffix != "_bucket": return base
            default: continue
            }
        }
        return nil
    }

    /// A HELP text escapes `\\` and newlines (`\n`), nothing else.
    private static func unescapeHelp(_ text: Substring, number: Int) throws -> String {
        var result = ""
        var rest = text
        while let character = rest.popFirst() {
            guard character == "\\" else { result.append(character); continue }
            switch rest.popFirst() {
            case "\\": result.append("\\")
            case "n": result.append("\n")
            default: throw Malformed(line: number, reason: "bad escape in HELP")
            }
        }
        return result
    }

    static func isMetricName(_ name: some StringProtocol) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    static func isLabelName(_ name: some StringProtocol) -> Bool {
        isMetricName(name) && !name.contains(":")
    }

    private static func sample(_ line: Substring, number: Int) throws -> Sample {
        var rest = line[...]
        let name = rest.prefix { $0 != "{" && $0 != " " }
        guard isMetricName(name) else { throw Malformed(line: number, reason: "bad metric name in \(line)") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = rest.prefix { $0 != "=" }
                guard isLabelName(label), rest.dropFirst(label.count).hasPrefix("=\"") else {
                    throw Malformed(line: number, reason: "bad label in \(line)")
                }
                rest = rest.dropFirst(label.count + 2)
                var value = ""
                while true {
                    guard let character = rest.popFirst() else { throw Malformed(line: number, reason: "unterminated label value in \(line)") }
                    if character == "\"" { break }
                    guard character == "\\" else { value.append(character); continue }
                    switch rest.popFirst() {
                    case "\\": value.append("\\")
                    case "\"": value.append("\"")
                    case "n": value.append("\n")
                    default: throw Malformed(line: number, reason: "bad escape in \(line)")
                    }
                }
                guard labels.updateValue(value, forKey: String(label)) == nil else {
                    throw Malformed(line: number, reason: "label \(label) twice in \(line)")
                }
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" {
                    throw Malformed(line: number, reason: "expected , or } in \(line)")
                }
            }
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: " ", omittingEmptySubsequences: true)
        guard rest.first == " ", (1...2).contains(fields.count), let value = parseValue(fields[0]),
              fields.count == 1 || Int64(fields[1]) != nil
        else { throw Malformed(line: number, reason: "bad value or timestamp in \(line)") }
        return Sample(name: String(name), labels: labels, value: value)
    }

    private static func parseValue(_ text: Substring) -> Double? {
        switch text {
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            // Swift's Double(_:) also takes "inf", "nan" and hex floats, which Prometheus does not.
            guard text.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) else { return nil }
            return Double(text)
        }
    }
}
