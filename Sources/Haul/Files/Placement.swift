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

    static func place(partPath: String, directory: String, name: String, policy: ConflictPolicy) throws(HaulError) -> Result {
        let target = join(directory, name)
        switch policy {
        case .overwrite:
            try SystemCalls.renameReplacing(from: partPath, to: target)
            return Result(path: target, skipped: false)
        case .skip:
            do {
                try SystemCalls.renameNoReplace(from: partPath, to: target)
                return Result(path: target, skipped: false)
            } catch where error.code == .fileExists {
                try SystemCalls.removeFile(partPath)
                return Result(path: target, skipped: true)
            }
        case .fail:
            do {
                try SystemCalls.renameNoReplace(from: partPath, to: target)
                return Result(path: target, skipped: false)
            } catch where error.code == .fileExists {
                throw HaulError(.fileExists, "\(target) already exists; choose another name or conflict policy")
            }
        case .rename:
            for number in 0...maxRenameAttempts {
                let candidate = join(directory, number == 0 ? name : numbered(name, number))
                do {
                    try SystemCalls.renameNoReplace(from: partPath, to: candidate)
                    return Result(path: candidate, skipped: false)
                } catch where error.code == .fileExists {
                    continue
                }
            }
            throw HaulError(.fileExists, "no free name like \(target) after \(maxRenameAttempts) tries")
        }
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
