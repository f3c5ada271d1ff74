import Foundation
import Haul
import Testing

/// The trimming helpers give what Foundation's `trimmingCharacters(in:)` gives.
@Suite("String trimming")
struct StringTrimmingTests {
    static let samples = [
        "", " ", "\t", "a", "  a b  ", "\ta\t", "\n a \n", "\u{00A0}nbsp\u{3000}", "\u{2028}x\u{0085}", "\r\n", " \u{1680}y\u{202F} ",
        "ünï cödé", "🙂 ",
    ]

    @Test(arguments: samples) func matchesFoundation(_ text: String) {
        #expect(text.trimmingBlanks() == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text.dropFirst(0).trimmingBlanks() == text.trimmingCharacters(in: .whitespaces))
    }
}
