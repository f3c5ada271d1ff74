/// Which unfinished download holds each part key, so that two downloads never write one part
/// file: a value type with one rule, instead of a dictionary changed from several places.
///
/// A download's key is derived from its request (`PartKey(for:)`), so that the same request
/// made again by a new process finds its part file. While an unfinished download holds that
/// key, another download of the same request takes a key of its own (`PartKey.owned(by:)`),
/// which nobody else can hold.
struct PartKeyOwnership {
    private var holders: [UInt64: DownloadID] = [:]

    /// The key a new download `id` of `request` writes its part file under.
    mutating func newKey(for request: DownloadRequest, id: DownloadID) -> PartKey {
        let key = PartKey(for: request)
        guard holders[key.base] == nil else { return key.owned(by: id) }
        holders[key.base] = id
        return key
    }

    /// A stored, unfinished download continues with the key it had.
    mutating func hold(_ key: PartKey, by id: DownloadID) {
        guard key.owner == nil else { return }
        holders[key.base] = id
    }

    /// A finished download runs again. Returns nil when it has its key back, or a key of its
    /// own when a newer download holds the shared one now: then its bytes must start over.
    mutating func reclaim(_ key: PartKey, by id: DownloadID) -> PartKey? {
        guard key.owner == nil else { return nil }
        if let holder = holders[key.base], holder != id { return key.owned(by: id) }
        holders[key.base] = id
        return nil
    }

    /// The download finished or is gone: a later download of the same request may take the key.
    mutating func release(_ key: PartKey, by id: DownloadID) {
        guard key.owner == nil, holders[key.base] == id else { return }
        holders[key.base] = nil
    }

    /// Whether no other unfinished download writes `id`'s part file.
    func owns(_ key: PartKey, id: DownloadID) -> Bool {
        key.owner != nil || (holders[key.base] ?? id) == id
    }
}
