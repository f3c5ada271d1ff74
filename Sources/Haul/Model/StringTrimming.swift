extension StringProtocol {
    /// Without leading and trailing spaces and tabs: what `trimmingCharacters(in: .whitespaces)`
    /// gives, without its trip through NSString, which on Linux cost more than the rest of
    /// parsing a response's headers or a line of an input file.
    package func trimmingBlanks() -> String {
        trimming { $0.isWhitespace && !$0.isNewline }
    }

    /// Without leading and trailing white space and newlines (`.whitespacesAndNewlines`).
    package func trimmingWhitespace() -> String {
        trimming(\.isWhitespace)
    }

    private func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
