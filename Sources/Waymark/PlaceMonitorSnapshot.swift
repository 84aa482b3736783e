import FoundationEssentials
import WaymarkCore

extension PlaceMonitor {
  /// The monitor's resumable state: the last accepted fix and every place that is not idle.
  ///
  /// Persist it (it is `Codable`; per-place `State` values can also be stored one row per place)
  /// and hand it to `restore(_:)` after a restart: an open visit then continues with its
  /// original arrival time, and a pending arrival or departure keeps its confirmations.
  public struct Snapshot: Sendable, Hashable, Codable {
    /// The last accepted fix (for pass-through across the restart, and fix-loss detection).
    public var previous: Sample?
    /// The state of every place that is not idle, by place id. Absent places are `.outside`.
    public var places: [String: State]
    /// Fixes held as suspect after `previous` (docs/guide/places-and-visits.md, "Detection"),
    /// oldest first; empty in snapshots written before they existed.
    public var suspects: [Sample]

    /// Creates a snapshot.
    public init(previous: Sample? = nil, places: [String: State] = [:], suspects: [Sample] = []) {
      self.previous = previous
      self.places = places
      self.suspects = suspects
    }
  }
}
