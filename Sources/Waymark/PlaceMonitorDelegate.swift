import FoundationEssentials
import WaymarkCore

/// Receives a `PlaceMonitor`'s events, in order, on the thread that processed the fix.
///
/// The delegate is fed from the same internal source as `PlaceMonitor.events` and the
/// notifications, so the styles never disagree. Both methods have empty defaults.
public protocol PlaceMonitorDelegate: AnyObject, Sendable {
  /// The device arrived at a place.
  func placeMonitor(_ monitor: PlaceMonitor, didArriveAt arrival: PlaceEvent.Arrival)
  /// The device left a place.
  func placeMonitor(_ monitor: PlaceMonitor, didDepartFrom departure: PlaceEvent.Departure)
}

extension PlaceMonitorDelegate {
  /// Does nothing.
  public func placeMonitor(_ monitor: PlaceMonitor, didArriveAt arrival: PlaceEvent.Arrival) {}
  /// Does nothing.
  public func placeMonitor(_ monitor: PlaceMonitor, didDepartFrom departure: PlaceEvent.Departure) {
  }
}
