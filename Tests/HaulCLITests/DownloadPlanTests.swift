import Foundation
import Haul
import Testing
@testable import HaulCLI

/// Turning command-line options and input-file entries into download requests.
@Suite struct DownloadPlanTests {
    /// Shared headers apply to every URL, per-line options only to their URL, and -d is the default directory.
    @Test func combinesSharedAndPerLineOptions() throws {
        let sum = String(repeating: "a", count: 64)
        let plan = try DownloadPlan(
            urls: ["http://h/a"],
            input: [InputEntry(url: "http://h/b", line: 1, outputName: "b.out", directory: "elsewhere", checksums: ["sha-256=\(sum)"], headers: ["X-Line: 1"])],
            options: DownloadPlan.Options(directory: "dest", headers: ["X-All: yes"], conflictPolicy: .skip))
        #expect(plan.requests.count == 2)
        let (first, second) = (plan.requests[0], plan.requests[1])
        #expect(first.headers == [HeaderField(name: "X-All", value: "yes")])
        #expect(first.directory.lastPathComponent == "dest")
        #expect(first.fileName == nil)
        #expect(first.conflictPolicy == .skip)
        #expect(second.headers == [HeaderField(name: "X-All", value: "yes"), HeaderField(name: "X-Line", value: "1")])
        #expect(second.directory.lastPathComponent == "elsewhere")
        #expect(second.fileName == "b.out")
        #expect(second.checksums == [try Checksum(.sha256, hex: sum)])
        #expect(second.metadata[DownloadPlan.displayDirectoryKey] == "elsewhere")
    }

    /// -o and --checksum need exactly one URL in all; no URLs at all is a usage error too.
    @Test func singleURLOptionsNeedOneURL() {
        let sum = "sha256=" + String(repeating: "0", count: 64)
        let cases: [([String], [InputEntry], DownloadPlan.Options)] = [
            (["http://h/a", "http://h/b"], [], DownloadPlan.Options(outputName: "x")),
            (["http://h/a"], [InputEntry(url: "http://h/b", line: 1)], DownloadPlan.Options(checksums: [sum])),
            ([], [], DownloadPlan.Options()),
        ]
        for (urls, input, options) in cases {
            #expect(throws: CommandFailure.self) {
                try DownloadPlan(urls: urls, input: input, options: options)
            }
        }
        #expect(throws: Never.self) {
            try DownloadPlan(urls: [], input: [InputEntry(url: "http://h/b", line: 1)], options: DownloadPlan.Options(outputName: "x", checksums: [sum]))
        }
    }
}
