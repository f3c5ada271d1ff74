import Crypto
import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// Issue 25, items 1 and 2: a download directory others can write into, and two runs of one
/// command at once. A link planted under the predictable part-file name is never written
/// through; a second run never writes into the part file the first is filling.
@Suite(.timeLimit(.minutes(2))) struct GetSharedDirectoryTests {
    /// The part file `haul get URL` (no -o) uses: `.haul-` + the first 16 hex digits of
    /// sha256(URL + "\n" + name) + `.part`, the name empty when none is given.
    static func partName(url: String, name: String = "") -> String {
        let digest = SHA256.hash(data: Data((url + "\n" + name).utf8))
        return ".haul-" + digest.prefix(8).map { String(format: "%02x", $0) }.joined() + ".part"
    }

    /// A symbolic link planted under the part file's name, pointing at a file elsewhere, is removed as a name: the download lands whole in the directory as a regular file and the link's target is untouched.
    @Test func plantedPartLinkIsNotWrittenThrough() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                try await withTemporaryDirectory { elsewhere in
                    let victim = elsewhere.file("precious.txt")
                    try Data("the user's own file\n".utf8).write(to: victim)
                    let url = server.url("/file/planted.bin", ["size": "100000", "seed": "31"])
                    try FileManager.default.createSymbolicLink(
                        atPath: directory.file(Self.partName(url: url)).path, withDestinationPath: victim.path)

                    let result = try await HaulProcess.run(["get", url], in: directory.url)
                    #expect(result.status == 0, "stderr: \(result.stderr)")
                    #expect(elsewhere.contents(of: "precious.txt") == Array("the user's own file\n".utf8), "written through the link")
                    #expect(directory.contents(of: "planted.bin") == Checksums.content(seed: 31, size: 100_000))
                    let kind = try FileManager.default.attributesOfItem(atPath: directory.file("planted.bin").path)[.type] as? FileAttributeType
                    #expect(kind == .typeRegular, "the final name is a regular file, not a link")
                    #expect(directory.haulLeftovers().isEmpty)
                }
            }
        }
    }

    /// Two runs of the same command at once, sharing a state directory or each with its own: the second finds the part file locked by the first and fails with a clear message (exit 8) without touching it (or, if it comes too late for that, fetches a copy of its own, or with the shared state directory finds the first's file and fetches nothing); the first places the exact file. No run places a wrong file.
    @Test(arguments: [true, false]) func secondRunNeverWritesIntoTheFirstsPartFile(sameStateDirectory: Bool) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                // 10 MiB at 2 MiB/s; the second run starts when the first has 6 MiB, as in the
                // issue: a second run that took the part file over would leave a hole of zeros
                // in the first one's file, which it would place with exit 0. The first has 2 s
                // left, time enough for the second to reach the part file.
                let size = 10 << 20
                let url = server.url("/file/twice.bin", ["size": "\(size)", "seed": "32", "rate": "\(2 << 20)"])
                let first = try HaulProcess(["get", "--json", url], in: directory.url)
                try #require(await first.stdout.progress(reaching: 6 << 20) != nil)
                let secondArguments = sameStateDirectory
                    ? ["get", url] : ["get", "--state-dir", directory.path + ".other-state", url]
                defer { try? FileManager.default.removeItem(atPath: directory.path + ".other-state") }
                let second = try HaulProcess(secondArguments, in: directory.url)
                // What the first run placed, looked at the moment it exits: a second run that
                // wrote into the same file could still be covering its own damage afterwards.
                let firstResult = await first.result()
                let placedByFirst = directory.contents(of: "twice.bin")
                let secondResult = await second.result()

                let expected = Checksums.content(seed: 32, size: size)
                #expect(firstResult.status == 0, "stderr: \(firstResult.stderr)")
                let zeroBlocks = placedByFirst.map { bytes in
                    stride(from: 0, to: bytes.count, by: 4096).filter { bytes[$0..<min($0 + 4096, bytes.count)].allSatisfy { $0 == 0 } }.count
                }
                let placedRight = placedByFirst == expected
                #expect(placedRight, "the first run placed a wrong file (\(zeroBlocks.map(String.init) ?? "no file"), all-zero 4 KiB blocks)")
                // The second run found the part file locked and wrote nothing (exit 8); or, on a
                // machine so loaded that it reached the part file only after the first had placed
                // it, it fetched a copy of its own. Either way no run placed a wrong file.
                let placed = directory.names().filter { !$0.hasPrefix(".") }
                if secondResult.status == 8 {
                    #expect(secondResult.stderr.contains("another download"), "stderr: \(secondResult.stderr)")
                    #expect(placed == ["twice.bin"])
                } else if sameStateDirectory && placed == ["twice.bin"] {
                    // Later still, with the first run's record in the shared store: the same
                    // command found the file as the first placed it and fetched nothing.
                    #expect(secondResult.status == 0, "stdout: \(secondResult.stdout) stderr: \(secondResult.stderr)")
                } else {
                    #expect(secondResult.status == 0, "stdout: \(secondResult.stdout) stderr: \(secondResult.stderr)")
                    #expect(placed == ["twice (1).bin", "twice.bin"])
                }
                for name in placed {
                    let right = directory.contents(of: name) == expected
                    #expect(right, "\(name) is not the file")
                }
                #expect(directory.haulLeftovers().isEmpty)
            }
        }
    }
}
