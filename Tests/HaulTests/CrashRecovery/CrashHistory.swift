import Foundation
import HaulTestServer

/// What the crash test saw, run by run: each run's output and, once it had ended, what the
/// server had received and sent per file. Its checks turn that into precise complaints
/// ("beta-3.dat was fetched again in run 5 after completing in run 2"), which say more about a
/// failure than a final byte count could.
struct CrashHistory {
    struct Run {
        let lines: [String]
        let killed: Bool
        /// `server.requests(forKey:).count` per file key when the run had ended.
        let requestCounts: [String: Int]
        /// `server.bytesSent(forKey:)` per file key when the run had ended.
        let bytesSent: [String: Int]
    }

    /// Bytes of one file that a killed run received and a later run fetched again.
    struct Refetch {
        let file: String
        let run: Int
        let bytes: Int
    }

    let batch: CrashBatch
    private(set) var runs: [Run] = []

    init(batch: CrashBatch) { self.batch = batch }

    mutating func record(lines: [String], killed: Bool, server: TestServer) {
        let counts = Dictionary(uniqueKeysWithValues: batch.files.map { ($0.key, server.requests(forKey: $0.key).count) })
        let sent = Dictionary(uniqueKeysWithValues: batch.files.map { ($0.key, server.bytesSent(forKey: $0.key)) })
        runs.append(Run(lines: lines, killed: killed, requestCounts: counts, bytesSent: sent))
    }

    var kills: Int { runs.count { $0.killed } }

    /// Files whose `completed` line appeared in a run and which the server was asked for again
    /// in a later run: a completed download must be recognised, never fetched a second time.
    func refetchedAfterCompletion() -> [String] {
        var problems: [String] = []
        let byName = Dictionary(uniqueKeysWithValues: batch.files.map { ($0.name, $0) })
        var reported: Set<String> = []
        for (index, run) in runs.enumerated() {
            for line in run.lines where line.hasPrefix("completed ") {
                let name = URL(fileURLWithPath: String(line.split(separator: " ", maxSplits: 2).last ?? "")).lastPathComponent
                guard let file = byName[name], !reported.contains(name) else { continue }
                let then = run.requestCounts[file.key] ?? 0
                let last = runs.last?.requestCounts[file.key] ?? 0
                if last != then {
                    reported.insert(name)
                    problems.append("\(name) completed in run \(index + 1) but was requested \(last - then) more time(s) afterwards")
                }
            }
        }
        return problems
    }

    /// Checks that every run continued each file from at least the last durable offset an
    /// earlier run announced for it (`checkpointed ID OFFSET`), with a `206`. `names` maps
    /// download IDs (as printed) to file names, from the store after the last run.
    ///
    /// One exception: a part that holds the whole file (the run was killed between its last
    /// checkpoint and the rename) is continued one byte short, since a range past the end
    /// would get a `416` and then the whole file again; the last byte revalidates it instead.
    func resumesBelowAnnouncedCheckpoints(names: [String: String], server: TestServer) -> [String] {
        var problems: [String] = []
        var announced: [String: Int] = [:]
        var previousCounts: [String: Int] = [:]
        for (index, run) in runs.enumerated() {
            for file in batch.files {
                let requests = server.requests(forKey: file.key)
                let before = previousCounts[file.key] ?? 0
                let after = run.requestCounts[file.key] ?? 0
                guard after > before, before < requests.count, let durable = announced[file.key], durable > 0 else { continue }
                let first = requests[before]
                let lowest = durable == file.size ? durable - 1 : durable
                if (Self.rangeStart(first) ?? -1) < lowest || first.status != 206 {
                    problems.append(
                        "run \(index + 1) asked for \(file.name) with Range \(first.header("range") ?? "none") and got "
                            + "\(first.status), though an earlier run announced a checkpoint at \(durable)")
                }
            }
            for line in run.lines where line.hasPrefix("checkpointed ") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, let name = names[String(fields[1])], let offset = Int(fields[2]),
                      let file = batch.files.first(where: { $0.name == name }) else { continue }
                announced[file.key] = offset
            }
            previousCounts = run.requestCounts
        }
        return problems
    }

    /// For every killed run and file it was fetching: the bytes it was sent that the next run
    /// fetching the file asked for again, i.e. where its body reached (its first successful
    /// response's start, plus what the server sent in that run) minus where the next run's
    /// first successful response started. A file with no later request was finished by then
    /// and lost nothing. A run's bytes are taken as one span from its first response (a retry
    /// within the run from an earlier offset would overstate the loss, never hide one).
    func refetchesPerKill(server: TestServer) -> [Refetch] {
        var refetches: [Refetch] = []
        for file in batch.files {
            let requests = server.requests(forKey: file.key)
            // Per run that asked for the file: where its body started, and where it reached.
            var spans: [(run: Int, start: Int, end: Int)] = []
            var previousCount = 0
            var previousSent = 0
            for (index, run) in runs.enumerated() {
                let count = run.requestCounts[file.key] ?? 0
                let sent = run.bytesSent[file.key] ?? 0
                defer { previousCount = count; previousSent = sent }
                guard count > previousCount else { continue }
                let answered = requests[previousCount..<min(count, requests.count)].first { (200..<300).contains($0.status) }
                let start = answered.map { $0.status == 206 ? Self.rangeStart($0) ?? 0 : 0 } ?? 0
                spans.append((index, start, start + sent - previousSent))
            }
            for (span, next) in zip(spans, spans.dropFirst()) where runs[span.run].killed && span.end > next.start {
                refetches.append(Refetch(file: file.name, run: span.run + 1, bytes: span.end - next.start))
            }
        }
        return refetches
    }

    /// N of a `Range: bytes=N-` header.
    static func rangeStart(_ request: RecordedRequest) -> Int? {
        guard let range = request.header("range"), range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        return Int(range.dropFirst(6).dropLast())
    }

    /// Lines of each kind per run, for diagnostics: "run 3 (killed): 2 added, 7 started, 31 checkpointed, 4 completed".
    func summary() -> String {
        runs.enumerated().map { index, run in
            var counts: [String: Int] = [:]
            for line in run.lines { counts[String(line.prefix { $0 != " " }), default: 0] += 1 }
            let kinds = ["added", "started", "checkpointed", "completed", "retrying", "failed"]
                .map { "\(counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
            return "run \(index + 1) (\(run.killed ? "killed" : "ran to the end")): \(kinds)"
        }.joined(separator: "\n")
    }
}
