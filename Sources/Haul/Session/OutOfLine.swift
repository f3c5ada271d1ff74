/// An optional value kept outside the struct that holds it, in a box of its own that exists
/// only while the value does.
///
/// Why: a manager keeps one `RecordDetails` per download for as long as it knows the download,
/// and most of them are finished, with no transfer state and no pending replacement. Held
/// inline, those two optionals were 600 of its 1,040 bytes (`MemoryLayout`), so each finished
/// download of a batch of 5,000 small files carried them: 3 MB of a run's peak, 60 MB for a
/// batch of 100,000. Here an absent value costs one pointer.
///
/// The wrapper keeps value semantics: a copy of the holder shares the box until either side
/// changes the value, which then gets a box of its own.
@propertyWrapper
struct OutOfLine<Wrapped> {
    private final class Box {
        var value: Wrapped
        init(_ value: Wrapped) { self.value = value }
    }

    private var box: Box?

    init(wrappedValue: Wrapped?) {
        box = wrappedValue.map { Box($0) }
    }

    var wrappedValue: Wrapped? {
        get { box?.value }
        set {
            guard let newValue else {
                box = nil
                return
            }
            if box != nil, isKnownUniquelyReferenced(&box!) {
                box!.value = newValue
            } else {
                box = Box(newValue)
            }
        }
    }
}
