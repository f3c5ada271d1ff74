import Haul
import Testing
@testable import HaulCLI

/// The text of the live progress display.
@Suite struct ProgressLineFormatterTests {
    /// A download line shows name, bar, percent, amounts, speed and ETA, and never exceeds the terminal width.
    @Test func downloadLineFitsTheWidth() {
        let progress = TransferProgress(completedBytes: 512 << 10, expectedBytes: 2 << 20, bytesPerSecond: 1_048_576)
        for columns in [20, 40, 80, 200] {
            let line = ProgressLineFormatter(columns: columns).downloadLine(name: String(repeating: "n", count: 300), progress: progress)
            #expect(line.count <= max(20, columns - 1))
        }
        let wide = ProgressLineFormatter(columns: 120).downloadLine(name: "file.iso", progress: progress)
        #expect(wide.hasPrefix("file.iso "))
        #expect(wide.contains("[#####---------------]   25%  512 KiB/2.0 MiB  1.0 MiB/s  ETA 2s"))
    }

    /// Unknown lengths show a question-mark bar and `--` instead of numbers that do not exist.
    @Test func unknownLength() {
        let line = ProgressLineFormatter(columns: 120).downloadLine(name: "stream", progress: TransferProgress(completedBytes: 1500))
        #expect(line.contains("[????????????????????]   --%  1.5 KiB  0 B/s  ETA --"))
    }

    /// Byte counts and durations read the way curl and aria2 print them.
    @Test func humanReadableUnits() {
        #expect(HumanReadable.bytes(0) == "0 B")
        #expect(HumanReadable.bytes(1023) == "1023 B")
        #expect(HumanReadable.bytes(1536) == "1.5 KiB")
        #expect(HumanReadable.bytes(300 << 20) == "300 MiB")
        #expect(HumanReadable.duration(.milliseconds(400)) == "1s")
        #expect(HumanReadable.duration(.seconds(185)) == "3m05s")
        #expect(HumanReadable.duration(.seconds(7260)) == "2h01m")
        #expect(HumanReadable.duration(nil) == "--")
    }
}
