import ArgumentParser
import Foundation
import Haul

/// `haul get`'s options for resources made of shards: HLS playlists and Metalink documents
/// (see docs/playlists.md).
struct ResourceOptions: ParsableArguments {
    @Flag(name: .customLong("hls"), help: "Treat every URL argument as an HLS playlist (otherwise: by .m3u8 extension or content type).")
    var forceHLS = false

    @Flag(name: .customLong("metalink"), help: "Treat every URL or file argument as a Metalink 4 document (otherwise: by .meta4 extension or content type).")
    var forceMetalink = false

    @Option(name: .customLong("hls-variant"), help: ArgumentHelp(
        "Variant of a master playlist: highest (default), lowest, index=N, bandwidth=BITS (the highest at most that) or resolution=WxH.",
        valueName: "choice"))
    var variant: String?

    @Flag(name: .customLong("join"), help: "Also join each HLS media playlist's segments into one playable file (AES-128 segments decrypted).")
    var join = false

    @Flag(name: .customLong("hls-allow-key-hosts"), help: "Accept HLS keys on another server than the playlist's (refused by default).")
    var allowKeyHosts = false

    @Flag(name: .customLong("hls-record"), help: "Record a live HLS playlist (no #EXT-X-ENDLIST) until it ends, reloading it as HLS asks (refused otherwise).")
    var record = false

    @Option(name: .customLong("hls-record-limit"), help: ArgumentHelp(
        "With --hls-record: stop after this much play time (90s, 30m, 2h); the local playlist then ends there.",
        valueName: "duration"))
    var recordLimit: String?

    func validate() throws {
        if forceHLS && forceMetalink { throw ValidationError("--hls and --metalink cannot be combined") }
        if let recordLimit {
            guard record else { throw ValidationError("--hls-record-limit applies to --hls-record") }
            guard let limit = RetryOptions.duration(recordLimit), limit > .zero else {
                throw ValidationError("--hls-record-limit must be a duration such as 90s, 30m or 2h, got '\(recordLimit)'")
            }
        }
        if let variant { _ = try VariantChoice(parsing: variant) }
    }

    var forcedKind: ResourcePlan.Kind? {
        forceHLS ? .hls : forceMetalink ? .metalink : nil
    }

    func hlsOptions(headers: [HeaderField]) throws(CommandFailure) -> HLSOptions {
        var options = HLSOptions(join: join, allowsKeysOnOtherHosts: allowKeyHosts, headers: headers, record: record)
        options.recordLimit = recordLimit.flatMap(RetryOptions.duration).map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
        if let variant {
            do { options.variant = try VariantChoice(parsing: variant) } catch { throw .usage(error.message) }
        }
        return options
    }

    /// Splits the URL arguments: documents (forced, or by extension), URLs to probe for a
    /// document's content type (an http(s) URL whose path has no extension), and plain URLs.
    func partition(_ arguments: [String]) -> (documents: [(String, ResourcePlan.Kind)], probes: [String], plain: [String]) {
        var documents: [(String, ResourcePlan.Kind)] = []
        var probes: [String] = []
        var plain: [String] = []
        for argument in arguments {
            let url = URL(string: argument)
            let isWeb = ["http", "https"].contains(url?.scheme?.lowercased() ?? "")
            if let kind = forcedKind ?? ResourcePlan.Kind(pathExtensionOf: isWeb ? url!.path : argument) {
                documents.append((argument, kind))
            } else if isWeb, (url!.path as NSString).pathExtension.isEmpty {
                probes.append(argument)
                plain.append(argument)
            } else {
                plain.append(argument)
            }
        }
        return (documents, probes, plain)
    }
}
