/// Schema version 5: control of a download through a daemon that does not run it (see
/// `docs/fleet.md`, "Control through another daemon"). Additive.
extension PostgresSchema {
    /// - `controlRequest`: a pause or cancel (`FleetControl.rawValue`) asked through another
    ///   daemon of a download under a live lease, for its owner to carry out: the owner finds
    ///   it with its renewal (or at once, woken by `haul_control`), stops the transfer as a local
    ///   pause or cancel would, and its fenced end clears it. A claimer of a download whose
    ///   owner died before that carries it out instead. NULL otherwise. No other writer touches
    ///   it: an owner's checkpoints and saves leave it alone, and a control never writes the
    ///   owner's columns.
    static let controlVersion = [
        "ALTER TABLE haul.download ADD COLUMN controlRequest text"
    ]
}
