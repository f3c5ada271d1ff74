import Foundation
import Haul

/// What the reporters need to know about each download: events carry only a `DownloadID`, and
/// asking the manager (an actor) for every event would cost a hop per line of output.
///
/// Built once, right after the batch was added, from `DownloadGroup.downloads()`.
struct DownloadCatalog: Sendable {
    struct Entry: Sendable {
        let url: URL
        /// The destination directory as the user wrote it (`.` by default).
        let displayDirectory: String
        /// The name asked for with `-o` or `out=`, if any.
        let requestedName: String?

        init(_ request: DownloadRequest) {
            url = request.url
            displayDirectory = request.metadata[DownloadPlan.displayDirectoryKey] ?? request.directory.path
            requestedName = request.fileName
        }
    }

    private let entries: [DownloadID: Entry]
    /// How many downloads the run has.
    let count: Int

    init(_ downloads: [DownloadInfo]) {
        var entries: [DownloadID: Entry] = [:]
        entries.reserveCapacity(downloads.count)
        // By index: a `for info in` loop would copy each whole `DownloadInfo` to read two fields.
        for index in downloads.indices { entries[downloads[index].id] = Entry(downloads[index].request) }
        self.entries = entries
        self.count = downloads.count
    }

    /// `intact` downloads, and the downloads `added` for `requests` (the same count, in the
    /// same order): what the batch asked for names them, without asking the manager for a
    /// snapshot of each (an actor's turn and a copy of every download, as transfers start).
    init(_ intact: [DownloadInfo], added: [DownloadID], requests: [DownloadRequest]) {
        precondition(added.count == requests.count, "one download for each request")
        var entries: [DownloadID: Entry] = [:]
        entries.reserveCapacity(intact.count + added.count)
        for index in intact.indices { entries[intact[index].id] = Entry(intact[index].request) }
        for (id, request) in zip(added, requests) { entries[id] = Entry(request) }
        self.entries = entries
        self.count = intact.count + added.count
    }

    /// The URL as given, for messages about a download.
    func url(of id: DownloadID) -> String {
        entries[id]?.url.absoluteString ?? id.description
    }

    /// A short name for progress lines: the requested name, else the URL's last path
    /// component, else its host. (The final name may differ once the server suggests one.)
    func name(of id: DownloadID) -> String {
        guard let entry = entries[id] else { return id.description }
        if let name = entry.requestedName { return name }
        let last = entry.url.lastPathComponent
        if !last.isEmpty, last != "/" { return last }
        return entry.url.host ?? entry.url.absoluteString
    }

    /// Where a finished file is, as the user would write it: `name` for the current
    /// directory, else `DIR/name` with DIR as given on the command line.
    func displayPath(of id: DownloadID, fileURL: URL?) -> String {
        guard let fileURL else { return name(of: id) }
        let fileName = fileURL.lastPathComponent
        guard let directory = entries[id]?.displayDirectory else { return fileURL.path }
        if directory == "." || directory.isEmpty { return fileName }
        return directory.hasSuffix("/") ? directory + fileName : directory + "/" + fileName
    }
}
