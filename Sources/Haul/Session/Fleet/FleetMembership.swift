import Foundation

/// How one daemon takes part in a fleet on a PostgreSQL store (`docs/fleet.md`): who it is,
/// how many downloads it runs at once, and how long its leases last.
///
/// A daemon on PostgreSQL is always a fleet member (a fleet of one is fine); the session's
/// limits (`maxConcurrentDownloads`, per host, group order) are counted across the fleet by
/// the claim, and `slots` is this daemon's own cap for its network and disk.
package struct FleetMembership: Sendable, Hashable {
    /// The daemon's fleet ID: new at every start, so a restarted daemon never believes it
    /// still holds what its previous life held.
    package var owner: String
    /// Downloads of a session this daemon runs at once (`haul daemon --fleet-slots`).
    package var slots: Int
    /// How long a lease lasts without a renewal (`L`); renewed every `L/3`. A daemon killed
    /// -9 has its downloads taken over after at most this long.
    package var leaseDuration: Duration
    /// How often an idle daemon asks for work when nothing woke it (`fleetWake`).
    package var claimInterval: Duration

    package static let defaultSlots = 16
    package static let defaultLeaseDuration: Duration = .seconds(30)

    /// A membership under a new fleet ID.
    package init(
        owner: String = UUID().uuidString.lowercased(), slots: Int = FleetMembership.defaultSlots,
        leaseDuration: Duration = FleetMembership.defaultLeaseDuration, claimInterval: Duration = .seconds(2)
    ) {
        self.owner = owner
        self.slots = max(1, slots)
        self.leaseDuration = leaseDuration
        self.claimInterval = claimInterval
    }
}
