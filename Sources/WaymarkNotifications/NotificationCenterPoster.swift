import Foundation
import Waymark
import WaymarkCore

/// Posts place events to a `NotificationCenter` as `.placeMonitorDidArrive` and
/// `.placeMonitorDidDepart`, with the monitor as `object` and the event and place id in
/// `userInfo` (``PlaceNotificationKey``).
public struct NotificationCenterPoster: PlaceEventPoster, @unchecked Sendable {
  // @unchecked: NotificationCenter is thread-safe; corelibs-foundation does not mark it Sendable.
  /// The center posted to.
  public let center: NotificationCenter

  /// A poster to `center`.
  public init(center: NotificationCenter) {
    self.center = center
  }

  public func post(_ event: PlaceEvent, from monitor: PlaceMonitor) {
    center.post(
      name: event.notificationName, object: monitor,
      userInfo: [
        PlaceNotificationKey.event: event,
        PlaceNotificationKey.placeID: event.placeID,
      ])
  }
}
