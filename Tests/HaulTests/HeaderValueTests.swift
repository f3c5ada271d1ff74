import Foundation
import Testing
@testable import Haul

/// `HeaderValue.contains` answers what `lowercased().contains` answered before it, on the
/// values servers send and on odd ones.
@Suite("Header values")
struct HeaderValueTests {
    @Test(arguments: [
        "bytes", "Bytes", "BYTES", "none", "None", "bytes, none", "", "byte", "xbytesx", " bytes ",
        "nonebytes", "nOnE", "ÉBYTES", "bytés", "no ne", "by\u{0}tes",
    ])
    func agreesWithLowercasedContains(_ value: String) {
        #expect(HeaderValue.contains(value, lowercaseASCII: "bytes") == value.lowercased().contains("bytes"))
        #expect(HeaderValue.contains(value, lowercaseASCII: "none") == value.lowercased().contains("none"))
    }
}
