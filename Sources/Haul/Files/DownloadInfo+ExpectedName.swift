import Foundation

extension DownloadInfo {
    /// The file name the download is expected to get, by the rule placement uses (the
    /// requested name, else the URL's last component made safe, else the final URL's, else
    /// "download"), without what only the finished transfer knows: a server's
    /// Content-Disposition name wins over the URL's at placement, and a taken name may become
    /// `name (1).ext`. Once the file is placed, `fileURL` is the truth.
    ///
    /// For displays that must show a name while a download runs, as aria2's `files[].path`
    /// does from the URL before its transfer ends.
    package var expectedFileName: String {
        FileNaming.resolveName(requested: request.fileName, contentDisposition: nil, originalURL: request.url, finalURL: finalURL)
    }
}
