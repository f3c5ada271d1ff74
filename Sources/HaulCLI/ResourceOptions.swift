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

    func validate() throws {
        if forceHLS && forceMetalink { throw ValidationError("--hls and --metalink cannot be combined") }
        if let variant { _ = try VariantChoice(parsing: variant) }
    }

    var forcedKind: ResourcePlan.Kind? {
        forceHLS ? .hls : forceMetalink ? .metalink : nil
    }

    func hlsOptions(headers: [HeaderField]) throws(CommandFailure) -> HLSOptions {
        var options = HLSOptions(join: join, allowsKeysOnOtherHosts: allowKeyHosts, headers: headers)
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
