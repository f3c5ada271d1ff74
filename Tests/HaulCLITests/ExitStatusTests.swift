import Haul
import Testing
@testable import HaulCLI

/// The exit status table: which `HaulError` codes lead to which status.
@Suite struct ExitStatusTests {
    /// Each documented kind of failure maps to its documented status.
    @Test func documentedMapping() {
        let expected: [(HaulError.Code, Int32)] = [
            (.invalidURL, 2), (.unsupportedScheme, 2), (.invalidRequest, 2), (.invalidFileName, 2), (.unsupportedProxy, 2),
            (.directoryNotFound, 3), (.permissionDenied, 3), (.diskFull, 3), (.fileSystem, 3),
            (.connectionFailed, 4), (.timeout, 4), (.deadlineExceeded, 4),
            (.certificate, 14),
            (.httpStatus, 5),
            (.checksumMismatch, 6),
            (.lengthMismatch, 7), (.invalidResponse, 7),
            (.fileExists, 8),
            (.tooManyRedirects, 9), (.redirectLoop, 9), (.unsupportedRedirect, 9),
            (.invalidState, 1), (.unknownDownload, 1), (.canceled, 1), (.shutdown, 1),
        ]
        for (code, status) in expected {
            #expect(ExitStatus(for: HaulError(code, "test")).rawValue == status, "\(code)")
        }
        #expect(ExitStatus.errorCodeTable.count == expected.count)
    }

    /// No failures is success, failures of one kind keep that kind's status, mixed kinds are 1.
    @Test func combiningFailures() {
        let notFound = HaulError(.httpStatus, "404", httpStatus: 404)
        let gone = HaulError(.httpStatus, "410", httpStatus: 410)
        let corrupt = HaulError(.checksumMismatch, "bad")
        let refused = HaulError(.connectionFailed, "refused")
        let timeout = HaulError(.timeout, "slow")
        #expect(ExitStatus(forFailures: []) == .success)
        #expect(ExitStatus(forFailures: [notFound, gone]) == .httpStatus)
        #expect(ExitStatus(forFailures: [refused, timeout]) == .network)
        #expect(ExitStatus(forFailures: [notFound, corrupt]) == .failure)
    }

    /// The signals map to 128 + N, and the help table lists every status once.
    @Test func signalsAndHelpTable() {
        #expect(ExitStatus.stopped(by: 2) == .interrupted)
        #expect(ExitStatus.stopped(by: 15) == .terminated)
        let table = ExitStatus.helpTable.split(separator: "\n")
        #expect(table.count == ExitStatus.allCases.count)
        #expect(table.allSatisfy { $0.count < 80 })
    }
}
