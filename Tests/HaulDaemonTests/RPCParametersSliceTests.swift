import Foundation
@testable import Haul
@testable import HaulDaemon
import Testing

/// `decodedArray` decodes a long array in slices at once: the result is the array `decoded`
/// gives, in order, and a refusal names the element as `decoded`'s does.
@Suite(.timeLimit(.minutes(1))) struct RPCParametersSliceTests {
    /// 1,500 requests, each with its own URL and one with every key, so that a slice put back
    /// in the wrong place or a key lost on the way would show.
    static func requests(_ count: Int) -> [JSONValue] {
        (0..<count).map { n -> JSONValue in
            var object: [String: JSONValue] = [
                "url": .string("http://127.0.0.1:8080/f\(n).bin"), "directory": "/srv/data",
            ]
            if n == 777 {
                object["fileName"] = "seven.bin"
                object["split"] = 4
                object["priority"] = 3
                object["conflictPolicy"] = "overwrite"
                object["metadata"] = ["k": "v"]
            }
            return .object(object)
        }
    }

    @Test func aLongArrayDecodesAsInOnePiece() async throws {
        let parameters = RPCParameters(["app", "g", .array(Self.requests(1500))])
        let whole = try parameters.decoded(2, "requests", as: [DownloadRequest].self)
        let sliced = try await parameters.decodedArray(2, "requests", of: DownloadRequest.self)
        #expect(sliced == whole)
        #expect(sliced.count == 1500)
        #expect(sliced.map(\.url.lastPathComponent) == (0..<1500).map { "f\($0).bin" })
        #expect(sliced[777].fileName == "seven.bin" && sliced[777].split == 4 && sliced[777].conflictPolicy == .overwrite)
    }

    /// The element refused is named by its place in the whole array, not in its slice.
    @Test func aRefusalNamesTheElementInTheWholeArray() async throws {
        var requests = Self.requests(1500)
        requests[1234] = ["directory": "/srv/data"]
        let parameters = RPCParameters(["app", "g", .array(requests)])
        do {
            _ = try await parameters.decodedArray(2, "requests", of: DownloadRequest.self)
            Issue.record("a request without a URL was decoded")
        } catch {
            #expect(error.message == "Invalid params: parameter 2 (requests): requests[1234].url is required but missing")
        }
    }

    /// A short array, a missing parameter and a value that is not an array are answered as
    /// `decoded` answers them.
    @Test func otherValuesAreDecodedInOnePiece() async throws {
        let short = RPCParameters(["app", "g", .array(Self.requests(3))])
        #expect(try await short.decodedArray(2, "requests", of: DownloadRequest.self).count == 3)
        do {
            _ = try await RPCParameters(["app", "g"]).decodedArray(2, "requests", of: DownloadRequest.self)
            Issue.record("a missing parameter was decoded")
        } catch {
            #expect(error.message == "Invalid params: parameter 2 (requests) is required but missing")
        }
        do {
            _ = try await RPCParameters(["app", "g", "x"]).decodedArray(2, "requests", of: DownloadRequest.self)
            Issue.record("a string was decoded as an array")
        } catch {
            #expect(error.message == "Invalid params: parameter 2 (requests): requests must be an array, got a string")
        }
    }
}
