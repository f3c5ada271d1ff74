import Foundation

/// The planner's side of recording a live media playlist: turns the unseen segments of each
/// load into local names and downloads, with the same rules as a finished playlist (http(s)
/// only, keys on the playlist's server unless allowed, safe names, one download per distinct
/// URL), and keeps the `LiveRecording` that decides when to reload and stop.
///
/// Carried by the `ResourcePlan` while the recording runs (`ResourcePlan.live`); once it stops,
/// `finishedPlan(_:)` puts the local playlist (with `EXT-X-ENDLIST`) and the joined file into
/// the plan's finishing step.
package struct LiveRecorder: Sendable, Hashable, Codable {
    /// The media playlist reloaded (its final URL after redirects).
    package let playlistURL: URL
    /// The local name of the media playlist, and of its joined file when `--join`.
    let playlistName: String
    let joinName: String?
    /// The document as given (`ResourcePlan.source`): credentials go to its server only.
    let source: String
    let options: HLSOptions
    package private(set) var recording: LiveRecording
    /// What to do after the last load.
    package private(set) var next: LiveRecording.Next = .reload(after: .seconds(1))
    private var names: LocalNames
    /// URLs already asked for (a key or an initialization section serves many segments).
    private var requested: Set<String> = []

    init(playlistURL: URL, playlistName: String, joinName: String?, source: String, options: HLSOptions, names: LocalNames) {
        self.playlistURL = playlistURL
        self.playlistName = playlistName
        self.joinName = joinName
        self.source = source
        self.options = options
        self.names = names
        recording = LiveRecording(maxSegments: options.limits.maxSegments, maxSeconds: options.recordLimit)
    }

    /// A load of the playlist: the downloads for its unseen segments (into `directory`).
    package mutating func take(_ playlist: MediaPlaylist, directory: URL) throws(HaulError) -> [DownloadRequest] {
        var requests: [DownloadRequest] = []
        var segments: [LiveRecording.Segment] = []
        for segment in recording.unseen(in: playlist) {
            var recorded = LiveRecording.Segment(sequence: segment.sequence, duration: segment.duration, file: "")
            recorded.byteRange = segment.byteRange
            recorded.discontinuity = segment.discontinuity
            if let map = segment.map {
                recorded.map = .init(file: try local(map.uri, line: map.line, ext: "mp4", into: directory, requests: &requests), range: map.byteRange)
            }
            if let key = segment.key {
                recorded.key = .init(file: try local(key.uri, line: key.line, ext: "key", key: true, into: directory, requests: &requests), iv: key.iv)
            }
            if segment.isGap {
                recorded.isGap = true
                recorded.file = LocalNames.portable(FileNaming.urlName(URL(string: segment.uri) ?? playlistURL) ?? "gap")
            } else {
                recorded.file = try local(segment.uri, line: segment.line, ext: "ts", into: directory, requests: &requests)
            }
            segments.append(recorded)
        }
        next = recording.recorded(segments, from: playlist)
        return requests
    }

    /// `plan` with its finishing step complete: the local playlist of what was recorded (ended)
    /// and its joined file; no longer live.
    package func finishedPlan(_ plan: ResourcePlan) -> ResourcePlan {
        var plan = plan
        plan.live = nil
        plan.localFiles.removeAll { $0.name == playlistName }
        plan.localFiles.append(LocalTextFile(name: playlistName, text: recording.playlistText()))
        if let joinName { plan.joins = [JoinSpec(output: joinName, parts: recording.joinParts())] }
        plan.duration = recording.duration
        return plan
    }

    private mutating func local(
        _ raw: String, line: Int, ext: String, key: Bool = false, into directory: URL, requests: inout [DownloadRequest]
    ) throws(HaulError) -> String {
        let resolved = try ResourceURI.resolve(raw, against: playlistURL, place: "\(playlistURL.lastPathComponent) line \(line)")
        if key, !options.allowsKeysOnOtherHosts, !ResourceURI.sameOrigin(resolved, playlistURL) {
            throw HaulError(.invalidResponse, "\(playlistURL.lastPathComponent) line \(line): the key \(resolved.absoluteString) is on another server than the playlist (allow it with --hls-allow-key-hosts)")
        }
        let name = names.name(for: resolved, defaultExtension: ext)
        if requested.insert(resolved.absoluteString).inserted {
            guard requested.count <= options.limits.maxFiles else {
                throw HaulError(.invalidResponse, "the recording has more than \(options.limits.maxFiles) files (the limit)")
            }
            requests.append(HLSPlanner.memberRequest(resolved, name: name, directory: directory, source: source, headers: options.headers))
        }
        return name
    }
}
