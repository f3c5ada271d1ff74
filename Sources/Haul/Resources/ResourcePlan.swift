import Foundation

/// A resource made of shards, planned: the downloads that fetch its files into one directory,
/// and the finishing step that makes them usable once all of them are there (local playlists
/// that point at the local files, a joined file, Metalink pieces checked and files put in place).
///
/// A plan is a value that can be kept (JSON) beside the group it was added as, so that whoever
/// sees the group complete (the app, `haul get`, or the daemon after a restart) can run the
/// finishing step, and run it again without harm (`ResourceFinisher`).
package struct ResourcePlan: Sendable, Hashable, Codable {
    package enum Kind: String, Sendable, Hashable, Codable {
        case hls, metalink
    }

    package var kind: Kind
    /// The document's URL (or file) as given.
    package var source: String
    /// The one directory every file of the resource goes into.
    package var directory: URL
    /// One request per file; all go into `directory`.
    package var requests: [DownloadRequest]
    /// Text files the finishing step writes (local playlists).
    package var localFiles: [LocalTextFile] = []
    /// Files the finishing step joins from downloaded parts.
    package var joins: [JoinSpec] = []
    /// Metalink files whose pieces the finishing step checks before placing them.
    package var pieceChecks: [PieceCheck] = []
    /// The file to open: the local (master) playlist, or the Metalink's first file.
    package var entryName: String?
    /// Total play time of the chosen media playlist, in seconds (HLS only).
    package var duration: Double?
    /// A live playlist being recorded (`HLSOptions.record`): the requests are the segments
    /// seen so far, and the finishing step's local playlist is written when the recording
    /// stops (`DownloadManager.recordResource`). Nil for everything else.
    package var live: LiveRecorder?

    package init(kind: Kind, source: String, directory: URL, requests: [DownloadRequest]) {
        self.kind = kind
        self.source = source
        self.directory = directory
        self.requests = requests
    }
}

/// A small text file of the resource, written atomically by the finishing step.
package struct LocalTextFile: Sendable, Hashable, Codable {
    package var name: String
    package var text: String
}

/// One file made by concatenating downloaded parts in order, each decrypted when it is an
/// AES-128 segment: MPEG-TS segments, or an fMP4 initialization section then its fragments.
package struct JoinSpec: Sendable, Hashable, Codable {
    package var output: String
    package var parts: [JoinPart]
}

/// One part of a joined file: a local file (or a byte range of it), and its key when encrypted.
package struct JoinPart: Sendable, Hashable, Codable {
    package var file: String
    package var range: ByteRange?
    /// Local name of the 16-byte AES-128 key file, when the part is encrypted.
    package var keyFile: String?
    /// The 16-byte IV (explicit, or the media sequence number).
    package var iv: [UInt8]?
}
