import Foundation
import Haul

/// Where a command finds the download store: `--state-dir`, else `$HAUL_STATE_DIR`, else the
/// library's default. One rule for `haul get`, `haul daemon` and `haul gc`, so that all of
/// them find the same store.
enum StateDirectoryOption {
    static func resolve(_ option: String?) -> URL {
        if let option { return URL(fileURLWithPath: option) }
        if let fromEnvironment = ProcessInfo.processInfo.environment["HAUL_STATE_DIR"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment)
        }
        return DownloadManager.defaultStateDirectory
    }
}
