#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard output or standard error, written with `write(2)` directly.
///
/// Unbuffered on purpose: `--json` readers and the tests act on each line as it appears, and
/// the progress display must land on the terminal before the next redraw. C stdio would hold
/// everything in a 4 KiB buffer whenever stdout is a pipe.
struct StandardStream: Sendable {
    let descriptor: Int32

    static let output = StandardStream(descriptor: STDOUT_FILENO)
    static let error = StandardStream(descriptor: STDERR_FILENO)

    /// Writes all of `text`. A closed pipe or full disk is ignored: there is no one to tell.
    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                #if canImport(Darwin)
                let written = Darwin.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                #elseif canImport(Glibc)
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                #else
                let written = Musl.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                #endif
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// Writes `line` and a newline.
    func writeLine(_ line: String) {
        write(line + "\n")
    }

    /// Whether the stream is a terminal (and so can show live progress).
    var isTerminal: Bool { isatty(descriptor) == 1 }

    /// The terminal's width in columns: the kernel's answer, else `$COLUMNS`, else 80.
    var columns: Int {
        var size = winsize()
        if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        if let text = getenv("COLUMNS"), let value = Int(String(cString: text)), value > 0 {
            return value
        }
        return 80
    }
}
