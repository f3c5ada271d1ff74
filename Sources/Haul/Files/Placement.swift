/// Moves a verified part file to its final name, atomically, by the conflict policy.
enum Placement {
    struct Result: Sendable, Hashable {
        var path: String
        /// The name was taken and the policy was `.skip`: nothing was moved.
        var skipped: Bool
        /// Size and modification time of the file as placed, when looked at right after (off
        /// the manager's actor): a later change by someone else is noticed by them.
        var stamp: Stamp?

        init(path: String, skipped: Bool, stamp: Stamp? = nil) {
            self.path = path
            self.skipped = skipped
            self.stamp = stamp
        }

        /// The result with the placed file's size and modification time.
        func stamped() -> Result {
            var result = self
            result.stamp = SystemCalls.describe(path).map { Stamp(size: $0.size, modified: $0.modified) }
            return result
        }
    }

    struct Stamp: Sendable, Hashable {
        var size: Int64
        /// Seconds since 1970.
        var modified: Double
    }

    /// How many `name (N).ext` variants `.rename` tries before giving up.
    static let maxRenameAttempts = 10_000

    /// Renames the open, locked part file to `name` in its directory (or the name the policy
    /// picks). Everything happens by name inside the directory's descriptor, so neither a link
    /// planted under a name nor a directory swapped for a link since moves anything elsewhere;
    /// and the entry renamed must be the very file that was verified, before and after.
    /// `entry` is the part file's current name: `part.name`, or `part.verifiedName` once marked.
    static func place(_ part: PartFile, from entry: String? = nil, name: String, policy: ConflictPolicy) throws(HaulError) -> Result {
        guard let open = part.handle else { preconditionFailure("placing a closed part file") }
        let directory = part.directoryPath
        let entry = entry ?? part.name
        let entryPath = join(directory, entry)
        guard open.isNamed(entry) else {
            throw HaulError(.fileSystem, "\(entryPath) was replaced or removed before it could be placed; nothing was moved")
        }
        let target = join(directory, name)
        switch policy {
        case .overwrite:
            try SystemCalls.renameReplacing(in: open.directory, from: entry, to: name, path: target)
            try confirm(open, placedAs: name, path: target)
            return Result(path: target, skipped: false)
        case .skip:
            do {
                try SystemCalls.renameNoReplace(in: open.directory, from: entry, to: name, path: target)
                try confirm(open, placedAs: name, path: target)
                return Result(path: target, skipped: false)
            } catch where error.code == .fileExists {
                try SystemCalls.removeEntry(in: open.directory, entry, path: entryPath)
                return Result(path: target, skipped: true)
            }
        case .fail:
            do {
                try SystemCalls.renameNoReplace(in: open.directory, from: entry, to: name, path: target)
            } catch where error.code == .fileExists {
                throw HaulError(.fileExists, "\(target) already exists; choose another name or conflict policy")
            }
            try confirm(open, placedAs: name, path: target)
            return Result(path: target, skipped: false)
        case .rename:
            for number in 0...maxRenameAttempts {
                let candidate = number == 0 ? name : numbered(name, number)
                let path = join(directory, candidate)
                do {
                    try SystemCalls.renameNoReplace(in: open.directory, from: entry, to: candidate, path: path)
                } catch where error.code == .fileExists {
                    continue
                }
                try confirm(open, placedAs: candidate, path: path)
                return Result(path: path, skipped: false)
            }
            throw HaulError(.fileExists, "no free name like \(target) after \(maxRenameAttempts) tries")
        }
    }

    /// After the rename: the name must hold the verified file. If someone swapped the part
    /// file's entry in the instant between the check and the rename, what was moved is theirs:
    /// it is removed again (as a name) and the download fails instead of reporting it placed.
    private static func confirm(_ open: OpenPartFile, placedAs name: String, path: String) throws(HaulError) {
        guard !open.isNamed(name) else { return }
        try? SystemCalls.removeEntry(in: open.directory, name, path: path)
        throw HaulError(.fileSystem, "\(path): the part file was replaced while it was being placed; the download is not placed")
    }

    /// `report.pdf` → `report (2).pdf`; `data.tar.gz` → `data (2).tar.gz`; `README` → `README (2)`.
    static func numbered(_ name: String, _ number: Int) -> String {
        let lower = name.lowercased()
        var splitIndex: String.Index?
        if let tar = lower.range(of: ".tar.", options: .backwards), tar.lowerBound > lower.startIndex {
            splitIndex = name.index(name.startIndex, offsetBy: lower.distance(from: lower.startIndex, to: tar.lowerBound))
        } else if let dot = name.lastIndex(of: "."), dot > name.startIndex {
            splitIndex = dot
        }
        guard let index = splitIndex else { return "\(name) (\(number))" }
        return "\(name[..<index]) (\(number))\(name[index...])"
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
