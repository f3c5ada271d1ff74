import Foundation

/// How one connection of a segmented transfer ended.
enum ConnectionEnd: Sendable {
    /// No work is left that it could take.
    case done
    /// Its request failed without bringing bytes; the others go on.
    case failed(HaulError)
    /// Writing or flushing failed: the whole transfer stops with this error.
    case fatal(HaulError)
    /// The transfer must stop and change course (the file changed, ranges unusable).
    case changeCourse(SegmentedTransfer.End)
}
