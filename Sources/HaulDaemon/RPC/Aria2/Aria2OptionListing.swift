import Haul

/// What `getOption` and `getGlobalOption` answer: option names to string values, like aria2,
/// limited to the options Haul honours: those it takes over RPC and the settled ones
/// (`Aria2SettledOptions`) it has a value for (aria2 lists only options that have a value too).
/// Secrets are never listed: a proxy is listed without its credentials.
enum Aria2OptionListing {
    /// A download's options, read from its request. `split` and `max-connection-per-server`
    /// are listed as they were `asked`. What was not asked shows the `defaults` when they give
    /// the connections the download has (as aria2 lists a download that set nothing), else
    /// those connections (asked before the daemon restarted, or before the defaults changed).
    /// `userAgent` is the manager's, sent when the request has no `User-Agent` header.
    static func download(
        _ request: DownloadRequest, asked: Aria2ConnectionOptions?, defaults: Aria2GlobalOptions,
        settled: [String: Aria2SettledOption], userAgent: String
    ) -> JSONValue {
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
        options["user-agent"] = .string(header("User-Agent", in: request.headers) ?? userAgent)
        if let referer = header("Referer", in: request.headers) { options["referer"] = .string(referer) }
        for (name, option) in settled where option.perDownload && !option.value.isEmpty {
            options[name] = .string(option.value)
        }
        return .object(options)
    }

    /// The value of the last header of that name (names compare case-insensitively).
    static func header(_ name: String, in headers: [HeaderField]) -> String? {
        headers.last { $0.name.lowercased() == name.lowercased() }?.value
    }

    static func global(
        _ global: Aria2GlobalOptions, maxConcurrentDownloads: Int, maxOverallDownloadLimit: Int64, userAgent: String,
        settled: [String: Aria2SettledOption]
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
        for (name, option) in settled where !option.value.isEmpty { options[name] = .string(option.value) }
        return .object(options)
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
