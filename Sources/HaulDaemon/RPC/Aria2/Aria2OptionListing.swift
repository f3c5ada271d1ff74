import Haul

/// What `getOption` and `getGlobalOption` answer: option names to string values, like aria2,
/// limited to the options Haul understands (aria2 lists only options that have a value too).
enum Aria2OptionListing {
    /// A download's options, read from its request. `split` and `max-connection-per-server`
    /// are listed as they were `asked`. What was not asked shows the `defaults` when they give
    /// the connections the download has (as aria2 lists a download that set nothing), else
    /// those connections (asked before the daemon restarted, or before the defaults changed).
    static func download(_ request: DownloadRequest, asked: Aria2ConnectionOptions?, defaults: Aria2GlobalOptions) -> JSONValue {
        let connections = request.split ?? 1
        let byDefaults = DaemonTransferOptions.connections(
            split: defaults.split, maxConnectionPerServer: defaults.maxConnectionPerServer) == connections
        let split = asked?.split ?? (byDefaults ? defaults.split : connections)
        let perServer = asked?.maxConnectionPerServer ?? (byDefaults ? defaults.maxConnectionPerServer : connections)
        var options: [String: JSONValue] = [
            "dir": .string(request.directory.path),
            "split": .string(String(split)),
            "max-connection-per-server": .string(String(perServer)),
            "max-download-limit": .string(String(request.maxBytesPerSecond ?? 0)),
        ]
        if let name = request.fileName { options["out"] = .string(name) }
        if !request.headers.isEmpty { options["header"] = .string(headerLines(request.headers)) }
        if let checksum = request.checksums.first { options["checksum"] = .string(aria2Form(checksum)) }
        let flags = Aria2GlobalOptions.flags(request.conflictPolicy)
        options["allow-overwrite"] = .string(String(flags.allowOverwrite))
        options["auto-file-renaming"] = .string(String(flags.autoFileRenaming))
        return .object(options)
    }

    static func global(
        _ global: Aria2GlobalOptions, maxConcurrentDownloads: Int, maxOverallDownloadLimit: Int64, userAgent: String
    ) -> JSONValue {
        var options: [String: JSONValue] = [
            "dir": .string(global.dir.path),
            "max-concurrent-downloads": .string(String(maxConcurrentDownloads)),
            "max-overall-download-limit": .string(String(maxOverallDownloadLimit)),
            "max-download-limit": .string(String(global.maxDownloadLimit)),
            "split": .string(String(global.split)),
            "max-connection-per-server": .string(String(global.maxConnectionPerServer)),
            "allow-overwrite": .string(String(global.allowOverwrite)),
            "auto-file-renaming": .string(String(global.autoFileRenaming)),
            "user-agent": .string(global.userAgent ?? userAgent),
        ]
        if let referer = global.referer { options["referer"] = .string(referer) }
        if !global.headers.isEmpty { options["header"] = .string(headerLines(global.headers)) }
        return .object(options)
    }

    /// The daemon-wide settings aria2 also has, read from the manager (the daemon's command
    /// line): listed by `getGlobalOption`, in aria2's forms (bytes, whole seconds), read-only
    /// here (`changeGlobalOption` does not take them).
    static func managerSettings(_ configuration: DownloadManager.Configuration) -> [String: JSONValue] {
        var options: [String: JSONValue] = [
            "min-split-size": .string(String(configuration.minSegmentSize)),
            "connect-timeout": .string(String(configuration.connectTimeout.components.seconds)),
            "timeout": .string(String(configuration.readTimeout.components.seconds)),
        ]
        if let kept = configuration.retention.maxFinished { options["max-download-result"] = .string(String(kept)) }
        return options
    }

    /// aria2 lists repeated options (`header`) as one string, one value per line.
    static func headerLines(_ headers: [HeaderField]) -> String {
        headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// `sha-256=…`: aria2's names for the hash functions.
    static func aria2Form(_ checksum: Checksum) -> String {
        let name: String
        switch checksum.algorithm {
        case .md5: name = "md5"
        case .sha1: name = "sha-1"
        case .sha256: name = "sha-256"
        case .sha512: name = "sha-512"
        }
        return "\(name)=\(checksum.hex)"
    }
}
