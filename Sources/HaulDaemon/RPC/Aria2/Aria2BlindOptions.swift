/// aria2 options that front-ends send without the user asking, which Haul accepts and ignores
/// (any value), so that those front-ends keep working. Every other option Haul does not honour
/// is refused with an error naming it (see `Aria2OptionParser`). The README lists the same
/// names ("aria2's options").
///
/// Where they come from: webui-aria2's settings dialog of a waiting download sends
/// `changeOption` with its whole table of per-download options (the value `getOption` listed,
/// else its own default), and of a running one `max-download-limit`, `max-upload-limit` and
/// three BitTorrent options. Those of its table that Haul honours or lists are not here; nor are
/// credentials (`http-user`, `http-passwd`, `ftp-user`, the proxy users and passwords): an
/// empty value of those asks for nothing and passes, another is refused, because a download
/// that silently goes without the credentials it was given would fail in a confusing way.
/// AriaNg and aria2p send only the options their user set, and browser extensions send
/// `header`, `referer`, `user-agent`, `out` and `dir`, which Haul honours.
enum Aria2BlindOptions {
    static let names: Set<String> = [
        // BitTorrent, DHT and Metalink: Haul downloads over HTTP(S) only.
        "bt-detach-seed-only", "bt-enable-hook-after-hash-check", "bt-enable-lpd", "bt-exclude-tracker",
        "bt-external-ip", "bt-force-encryption", "bt-hash-check-seed", "bt-max-open-files", "bt-max-peers",
        "bt-metadata-only", "bt-min-crypto-level", "bt-prioritize-piece", "bt-remove-unselected-file",
        "bt-request-peer-speed-limit", "bt-require-crypto", "bt-save-metadata", "bt-seed-unverified",
        "bt-stop-timeout", "bt-tracker", "bt-tracker-connect-timeout", "bt-tracker-interval", "bt-tracker-timeout",
        "enable-dht", "enable-dht6", "enable-peer-exchange", "follow-torrent", "follow-metalink", "index-out",
        "max-upload-limit", "metalink-base-uri", "metalink-enable-unique-protocol", "metalink-language",
        "metalink-location", "metalink-os", "metalink-version", "pause-metadata", "seed-ratio", "seed-time",
        "select-file",
        // FTP: not supported.
        "ftp-pasv", "ftp-reuse-connection", "ftp-type",
        // How aria2 itself runs (console, RPC server, configuration file, DNS, disk access).
        "async-dns", "daemon", "deferred-input", "disable-ipv6", "dry-run", "enable-async-dns6", "enable-color",
        "enable-mmap", "enable-rpc", "human-readable", "no-conf", "quiet", "rpc-allow-origin-all", "rpc-listen-all",
        "rpc-secure", "show-console-readout", "show-files", "truncate-console-readout",
        // Transfer details aria2 exposes and Haul decides itself (see the README for what it does).
        "allow-piece-length-change", "always-resume", "check-integrity", "conditional-get",
        "enable-http-keep-alive", "enable-http-pipelining", "file-allocation", "force-save", "hash-check-only",
        "http-accept-gzip", "http-auth-challenge", "http-no-cache", "lowest-speed-limit", "max-file-not-found",
        "max-resume-failure-tries", "no-file-allocation-limit", "no-netrc", "parameterized-uri", "piece-length",
        "proxy-method", "realtime-chunk-checksum", "remote-time", "remove-control-file", "reuse-uri",
        "stream-piece-selector", "uri-selector", "use-head",
    ]
}
