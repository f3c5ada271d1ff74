/// Whether a byte-by-byte scan of JSON text is inside a string, with the string's escapes: what
/// the scans that read a text's structure without parsing it (`JSONNesting`,
/// `StoredEventText.answerText`) must know so that brackets, commas and quotes inside strings
/// do not count.
struct JSONStringState {
    /// Inside a string: after its opening quote, before its closing one.
    private(set) var isInString = false
    private var escaped = false

    /// Takes `byte` when it belongs to a string (its closing quote included) and returns true;
    /// false for a byte outside any string, which is the caller's to read.
    mutating func consumesInString(_ byte: UInt8) -> Bool {
        guard isInString else { return false }
        if escaped {
            escaped = false
        } else if byte == UInt8(ascii: "\\") {
            escaped = true
        } else if byte == UInt8(ascii: "\"") {
            isInString = false
        }
        return true
    }

    /// The caller read a string's opening quote.
    mutating func enterString() {
        isInString = true
    }
}
