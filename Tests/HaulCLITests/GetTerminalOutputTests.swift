import Foundation
import HaulTestServer
import HaulTestSupport
import Testing

/// `haul get` with a terminal as stdout: live progress redrawn in place.
@Suite(.enabled(if: HaulProcess.canRunInTerminal, "needs util-linux script(1) for a pseudo-terminal"), .timeLimit(.minutes(2)))
struct GetTerminalOutputTests {
    /// On a terminal, progress lines with a bar and a total line are redrawn in place with ANSI escapes, finished files scroll above as `done` lines, and the run ends with the summary line.
    @Test func progressIsRedrawnInPlace() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let size = 600_000
                // Held half way until the progress block was redrawn once, however slow the machine.
                let run = try HaulProcess([
                    "get", server.url("/file/live.bin", ["size": "\(size)", "rate": "1000000", "seed": "3", "hold": "300000"]),
                    server.url("/file/gone.bin", ["status": "404"]),
                ], in: directory.url, inTerminal: true)
                let redrawn = await run.stdout.firstLine { $0.contains("\u{1B}[J") }
                #expect(redrawn != nil, "the progress block is redrawn while the file is held")
                server.release(key: "/file/live.bin")
                let result = await run.result()

                #expect(result.status == 5, "output: \(result.stdout)")
                let screen = result.stdout
                #expect(screen.contains("\u{1B}[J"), "no in-place redraw: \(screen.debugDescription)")
                #expect(screen.contains("live.bin"))
                #expect(screen.contains("%"))
                #expect(screen.contains("total  "))
                #expect(screen.contains("done live.bin (\(size) bytes)"))
                #expect(screen.contains("failed \(server.url("/file/gone.bin", ["status": "404"]))"))
                let lastLine = screen.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
                #expect(lastLine.contains("finished: 1 done, 1 failed of 2; 586 KiB received in "))
                #expect(directory.contents(of: "live.bin") == Checksums.content(seed: 3, size: size))
            }
        }
    }
}
