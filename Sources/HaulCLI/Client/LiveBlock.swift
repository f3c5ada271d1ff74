/// A block of lines at the bottom of a terminal, redrawn in place: the cursor goes back up
/// over the previous block, the screen is cleared from there down, lines that stay are
/// printed, then the new block. The lines must not wrap (`ProgressLineFormatter` cuts them to
/// the width), or the cursor arithmetic would be off.
struct LiveBlock {
    private(set) var drawnLines = 0
    let stream: StandardStream

    init(stream: StandardStream = .output) {
        self.stream = stream
    }

    /// Replaces the block on screen with `permanent` (which stay) followed by `block`.
    mutating func draw(permanent: [String], block: [String]) {
        stream.write(Self.text(erasing: drawnLines, permanent: permanent, block: block))
        drawnLines = block.count
    }

    /// The bytes for one redraw, in one write so that the terminal never shows half of it.
    static func text(erasing previousLines: Int, permanent: [String], block: [String]) -> String {
        // Cursor up over the old block, to column 0, clear to the end of the screen.
        var text = previousLines > 0 ? "\u{1B}[\(previousLines)A\r\u{1B}[J" : ""
        for line in permanent + block { text += line + "\n" }
        return text
    }
}
