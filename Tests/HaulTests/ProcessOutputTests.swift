import Foundation
import HaulTestSupport
import Testing

/// The line waits every process-driving test relies on: they must count lines already
/// received and lines still to come alike, and end (not hang) when the output ends first.
@Suite("Waiting for a child's output lines", .timeLimit(.minutes(1)))
struct ProcessOutputTests {
    @Test func theNthMatchingLineCountsLinesAlreadyReceivedAndLinesToCome() async {
        let output = ProcessOutput()
        await output.append(Data("done a\nskip\ndo".utf8))
        async let third = output.waitForLines(3) { $0.hasPrefix("done") }
        async let first = output.firstLine { $0.hasPrefix("done") }
        #expect(await first == "done a")
        await output.append(Data("ne b\nother\n".utf8))
        await output.append(Data("done c\n".utf8))
        #expect(await third)
        #expect(await output.lines == ["done a", "skip", "done b", "other", "done c"])
    }

    @Test func theOutputsEndAnswersWaitsThatCannotBeMet() async {
        let output = ProcessOutput()
        await output.append(Data("done a\nlast, unterminated".utf8))
        async let two = output.waitForLines(2) { $0.hasPrefix("done") }
        async let unterminated = output.firstLine { $0.hasPrefix("last") }
        await output.finish()
        #expect(await two == false)
        #expect(await unterminated == "last, unterminated")
        #expect(await output.waitForLines(1) { $0.hasPrefix("done") })
        #expect(await output.firstLine { $0 == "never" } == nil)
    }
}
