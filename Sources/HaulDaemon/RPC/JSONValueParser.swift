import Foundation

/// Reads JSON text into a `JSONValue` in one pass over its bytes.
///
/// `JSONDecoder` can only learn a value's kind through `Codable` by trying each kind in turn,
/// and every failed try builds a `DecodingError` with its coding path: a `haul.addGroup` of
/// 5,000 requests spent a fifth of the daemon's CPU there (and every `haul.events` answer went
/// the same way back). This reader looks at the first byte instead.
///
/// It accepts what `JSONDecoder` accepted into `JSONValue` before, so that no client sees a
/// difference (`JSONValueParserTests` compares the two):
/// - a number is `.integer` when it is an integer literal that fits `Int64`, or any other
///   literal whose double is an `Int64` exactly (`1.0`, `1e3`, `1e-400`; from 2^53 up its
///   value comes from its own digits, as `JSONDecoder` reads them); otherwise `.double`, which
///   must be finite (`1e400` is refused);
/// - of a key given twice, the first value counts;
/// - one trailing comma before `]` or `}` is allowed, and so is a leading byte order mark;
/// - strings must be valid UTF-8 without raw control characters, and `\u` escapes must pair
///   their surrogates.
///
/// Nesting is bounded (`maxDepth`): the handler refuses deeper bodies before they get here
/// (`JSONNesting`), and the bound keeps any other caller's stack safe too.
struct JSONValueParser {
    /// Why a text is not JSON, and where (a byte offset).
    struct Failure: Error, Sendable, CustomStringConvertible {
        var offset: Int
        var reason: String
        var description: String { "\(reason) at byte \(offset)" }
    }

    static let defaultMaxDepth = 512

    /// The value `bytes` hold, with nothing but whitespace after it.
    static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        var parser = JSONValueParser(bytes: bytes, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    static func parse(_ data: Data, maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure> = data.withUnsafeBytes { bytes in
            Result { () throws(Failure) -> JSONValue in try parse(bytes, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        var text = text
        let result: Result<JSONValue, Failure> = text.withUTF8 { bytes in
            Result { () throws(Failure) -> JSONValue in try parse(UnsafeRawBufferPointer(bytes), maxDepth: maxDepth) }
        }
        return try result.get()
    }

    private let bytes: UnsafeRawBufferPointer
    private let maxDepth: Int
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private mutating func parseDocument() throws(Failure) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the value") }
        return value
    }

    private mutating func parseValue() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw failure("the text ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw failure("unexpected character")
        }
    }

    private mutating func parseObject() throws(Failure) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        guard !closes(UInt8(ascii: "}")) else { return .object(members) }
        repeat {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try parseString()
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw failure("expected ':' after a key") }
            let value = try parseValue()
            if members[key] == nil { members[key] = value }
        } while try continuesAfterElement(closing: UInt8(ascii: "}"))
        return .object(members)
    }

    private mutating func parseArray() throws(Failure) -> JSONValue {
        try enterContainer()
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        guard !closes(UInt8(ascii: "]")) else { return .array(elements) }
        repeat {
            elements.append(try parseValue())
        } while try continuesAfterElement(closing: UInt8(ascii: "]"))
        return .array(elements)
    }

    /// After an element of an array or object: true when a comma announces another, false at
    /// the closing bracket (after one trailing comma too, as `JSONDecoder` allows).
    private mutating func continuesAfterElement(closing: UInt8) throws(Failure) -> Bool {
        if closes(closing) { return false }
        guard consume(UInt8(ascii: ",")) else { throw failure("expected ',' or the closing bracket") }
        return !closes(closing)
    }

    /// Steps over white space and then `bracket`, if that comes next.
    private mutating func closes(_ bracket: UInt8) -> Bool {
        skipWhitespace()
        return consume(bracket)
    }

    /// Steps over `[` or `{`, counting the level.
    private mutating func enterContainer() throws(Failure) {
        depth += 1
        guard depth <= maxDepth else { throw failure("arrays and objects nest deeper than \(maxDepth) levels") }
        index += 1
    }

    private mutating func parseNumber() throws(Failure) -> JSONValue {
        let start = index
        var isInteger = true
        _ = consume(UInt8(ascii: "-"))
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a number needs a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw failure("a number may not start with 0") }
        } else {
            skipDigits()
        }
        if consume(UInt8(ascii: ".")) {
            isInteger = false
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a digit must follow '.'") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            guard index < bytes.count, isDigit(bytes[index]) else { throw failure("a digit must follow the exponent") }
            skipDigits()
        }
        let literal = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        if isInteger, let integer = Self.int64(literal) { return .integer(integer) }
        guard let double = Double(String(decoding: literal, as: UTF8.self)), double.isFinite else {
            index = start
            throw failure("a number out of range")
        }
        if !isInteger, Int64(exactly: double) != nil {
            // As JSONDecoder: below 2^53 the double is the value; above, the literal's own
            // digits are (without their fraction), which the double may have rounded.
            if double.magnitude < 9_007_199_254_740_992 { return .integer(Int64(double)) }
            if let integer = Self.truncatedDecimal(literal) { return .integer(integer) }
        }
        return .double(double)
    }

    /// The whole part of a literal with a fraction or an exponent, read from its digits as
    /// `JSONDecoder` reads it (through `Decimal`): at most 38 significant digits, trailing
    /// zeros dropped, and what is left must fit `UInt64`; nil when it does not (the literal is
    /// then a double).
    private static func truncatedDecimal(_ literal: UnsafeRawBufferPointer) -> Int64? {
        var digits: [UInt8] = []
        var exponent = 0
        var writtenExponent = 0
        var exponentIsNegative = false
        var part = 0  // 0: the whole part, 1: the fraction, 2: the exponent
        for byte in literal {
            switch byte {
            case UInt8(ascii: "."): part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"): part = 2
            case UInt8(ascii: "-") where part == 2: exponentIsNegative = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = byte - UInt8(ascii: "0")
                if part == 2 {
                    writtenExponent = min(writtenExponent * 10 + Int(digit), 100_000)
                } else {
                    if part == 1 { exponent -= 1 }
                    if digit != 0 || !digits.isEmpty { digits.append(digit) }
                }
            default: break
            }
        }
        exponent += exponentIsNegative ? -writtenExponent : writtenExponent
        if digits.count > 38 {
            exponent += digits.count - 38
            digits.removeLast(digits.count - 38)
        }
        while digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        var magnitude: UInt64 = 0
        for digit in digits {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            if overflow || overflow2 { return nil }
            magnitude = next
        }
        while exponent < 0, magnitude > 0 {
            magnitude /= 10
            exponent += 1
        }
        while exponent > 0, magnitude > 0 {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            if overflow { return nil }
            magnitude = times10
            exponent -= 1
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return literal[0] == UInt8(ascii: "-") ? -Int64(magnitude) : Int64(magnitude)
    }

    /// An integer literal's value, or nil when it does not fit.
    private static func int64(_ literal: UnsafeRawBufferPointer) -> Int64? {
        let negative = literal[0] == UInt8(ascii: "-")
        var value: Int64 = 0
        for byte in literal.dropFirst(negative ? 1 : 0) {
            let digit = Int64(byte &- UInt8(ascii: "0"))
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            // Accumulated negatively, so that Int64.min fits.
            let (next, overflow2) = times10.subtractingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    private mutating func parseString() throws(Failure) -> String {
        index += 1
        let start = index
        var isASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if isASCII { return String(decoding: content, as: UTF8.self) }
                guard let text = Self.validUTF8(content) else {
                    index = start
                    throw failure("a string that is not UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("a control character in a string") }
            if byte >= 0x80 { isASCII = false }
            index += 1
        }
        guard index < bytes.count else { throw failure("a string without its closing quote") }
        return try parseEscapedString(from: start)
    }

    /// The rest of a string holding escapes, from its first byte, decoded into a buffer.
    private mutating func parseEscapedString(from start: Int) throws(Failure) -> String {
        var decoded: [UInt8] = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = decoded.withUnsafeBytes({ Self.validUTF8($0) }) else {
                    index = start
                    throw failure("a string that is not UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw failure("a string without its closing quote") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"): decoded.append(contentsOf: String(try parseUnicodeEscape()).utf8)
                default:
                    index -= 2
                    throw failure("an unknown escape in a string")
                }
            default:
                if byte < 0x20 { throw failure("a control character in a string") }
                decoded.append(byte)
                index += 1
            }
        }
        throw failure("a string without its closing quote")
    }

    /// The character of a `\u` escape (after the `u`), reading its low surrogate if it is a
    /// high one.
    private mutating func parseUnicodeEscape() throws(Failure) -> Character {
        let first = try parseHex4()
        if let scalar = Unicode.Scalar(first) { return Character(scalar) }
        guard (0xD800...0xDBFF).contains(first), index + 1 < bytes.count,
              bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
        else { throw failure("a \\u escape of a lone surrogate") }
        index += 2
        let second = try parseHex4()
        guard (0xDC00...0xDFFF).contains(second),
              let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
        else { throw failure("a \\u escape of a lone surrogate") }
        return Character(scalar)
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private static func validUTF8(_ bytes: UnsafeRawBufferPointer) -> String? {
        if #available(macOS 15, *) {
            return String(validating: bytes, as: UTF8.self)
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    private mutating func expectLiteral(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
              memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0
        else { throw failure("unexpected character") }
        index += count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private func failure(_ reason: String) -> Failure {
        Failure(offset: index, reason: reason)
    }
}
