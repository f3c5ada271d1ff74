import Haul

/// A Haul error as aria2's `errorCode` (the exit status numbers in aria2's manual), so that
/// front ends that explain or group failures by code keep working.
enum Aria2ErrorCode {
    static let finished = 0
    static let unknown = 1
    static let timeout = 2
    static let resourceNotFound = 3
    static let network = 6
    static let diskFull = 9
    static let fileExists = 13
    static let cannotCreateFile = 16
    static let fileIO = 17
    static let cannotCreateDirectory = 18
    static let badHTTPResponse = 22
    static let tooManyRedirects = 23
    static let authorizationFailed = 24
    static let badOption = 28
    static let serverOverloaded = 29
    /// aria2 reports removed downloads with this code.
    static let removed = 31
    static let checksumMismatch = 32

    static func code(for error: HaulError) -> Int {
        switch error.code {
        case .timeout, .deadlineExceeded: return timeout
        case .connectionFailed, .lengthMismatch, .certificate: return network
        case .diskFull: return diskFull
        case .fileExists: return fileExists
        case .permissionDenied, .invalidFileName: return cannotCreateFile
        case .fileSystem: return fileIO
        case .directoryNotFound: return cannotCreateDirectory
        case .invalidResponse, .unsupportedRedirect: return badHTTPResponse
        case .tooManyRedirects, .redirectLoop: return tooManyRedirects
        case .checksumMismatch: return checksumMismatch
        case .invalidURL, .unsupportedScheme, .invalidRequest: return badOption
        case .canceled: return removed
        case .httpStatus: return code(forStatus: error.httpStatus)
        default: return unknown
        }
    }

    static func code(forStatus status: Int?) -> Int {
        switch status {
        case 404?, 410?: return resourceNotFound
        case 401?, 407?: return authorizationFailed
        case 429?, 503?: return serverOverloaded
        default: return badHTTPResponse
        }
    }
}
