import Foundation
import Waymark
import WaymarkCore

extension Notification.Name {
  /// Posted by a `PlaceMonitor` (the notification's `object`) when the device arrives at a
  /// place. `userInfo`: `PlaceNotificationKey.event` (`PlaceEvent`, `.arrival`) and
  /// `PlaceNotificationKey.placeID` (`String`).
  public static let placeMonitorDidArrive = Notification.Name("WaymarkPlaceMonitorDidArrive")
  /// Posted by a `PlaceMonitor` (the notification's `object`) when the device leaves a place.
  /// `userInfo`: `PlaceNotificationKey.event` (`PlaceEvent`, `.departure`) and
  /// `PlaceNotificationKey.placeID` (`String`).
  public static let placeMonitorDidDepart = Notification.Name("WaymarkPlaceMonitorDidDepart")
}

/// Keys of the `userInfo` of place notifications.
public enum PlaceNotificationKey {
  /// The `PlaceEvent`.
  public static let event = "event"
  /// The place id, a `String`.
  public static let placeID = "placeID"
}

extension PlaceEvent {
  /// The notification name this event is posted under.
  public var notificationName: Notification.Name {
    switch self {
    case .arrival: .placeMonitorDidArrive
    case .departure: .placeMonitorDidDepart
    }
  }

  /// The event carried by a place notification, if it is one.
  public init?(_ notification: Notification) {
    guard let event = notification.userInfo?[PlaceNotificationKey.event] as? PlaceEvent else {
      return nil
    }
    self = event
  }
}

/// A registration for place notifications that removes itself: when `cancel()` is called or
/// the token is released, its observers leave the notification center and the handler (with
/// everything it captured) is released. Keep the token as long as you want events.
///
/// This is NotificationCenter observation without its trap: block-based observers must be
/// removed by hand in Foundation, and forgetting it leaks the block and keeps it firing.
public final class PlaceEventObservation: Sendable {
  private struct Registration: @unchecked Sendable {
    // NotificationCenter observer tokens are opaque objects only ever passed back to
    // `removeObserver(_:)`, which is thread-safe.
    var center: NotificationCenter
    var observers: [any NSObjectProtocol]
  }

  private let registration: Locked<Registration?>

  fileprivate init(center: NotificationCenter, observers: [any NSObjectProtocol]) {
    registration = Locked(Registration(center: center, observers: observers))
  }

  /// A token that never delivered (its monitor has no notification center).
  fileprivate init() {
    registration = Locked(nil)
  }

  /// Whether the observation still delivers.
  public var isActive: Bool { registration.withLock { $0 != nil } }

  /// Stops delivery and releases the handler. Idempotent.
  public func cancel() {
    guard let registration = registration.withLock({ $0.take() }) else { return }
    for observer in registration.observers { registration.center.removeObserver(observer) }
  }

  deinit { cancel() }
}

extension PlaceMonitor {
  /// Creates a monitor over `places` that also posts its events to `notificationCenter`
  /// (`object`: the monitor; `userInfo`: see ``PlaceNotificationKey``).
  ///
  /// - Parameters:
  ///   - places: The places to watch. Ids should be unique; a later duplicate is ignored.
  ///   - configuration: Detection defaults (places may override some).
  ///   - notificationCenter: Where to post events, usually `.default`; `nil` for nowhere.
  public convenience init(
    places: [Place], configuration: Configuration = Configuration(),
    notificationCenter: NotificationCenter?
  ) {
    self.init(
      places: places, configuration: configuration,
      poster: notificationCenter.map(NotificationCenterPoster.init(center:)))
  }

  /// The notification center the events are posted to, if any.
  public var notificationCenter: NotificationCenter? {
    (poster as? NotificationCenterPoster)?.center
  }

  /// Observes this monitor's arrival and departure notifications.
  ///
  /// - Parameters:
  ///   - queue: The operation queue to run `handler` on; `nil` runs it synchronously on the
  ///     posting thread (the thread that processed the fix).
  ///   - handler: Called with each event of this monitor (not of other monitors that post to
  ///     the same center).
  /// - Returns: The token that keeps the observation alive; drop it or call `cancel()` to stop.
  ///   Without a notification center, an inactive token.
  public func observeEvents(
    queue: OperationQueue? = nil, _ handler: @escaping @Sendable (PlaceEvent) -> Void
  ) -> PlaceEventObservation {
    guard let center = notificationCenter else {
      return PlaceEventObservation()
    }
    let monitorID = ObjectIdentifier(self)
    let block: @Sendable (Notification) -> Void = { notification in
      guard let object = notification.object as AnyObject?,
        ObjectIdentifier(object) == monitorID,
        let event = PlaceEvent(notification)
      else { return }
      handler(event)
    }
    let observers = [Notification.Name.placeMonitorDidArrive, .placeMonitorDidDepart].map {
      center.addObserver(forName: $0, object: nil, queue: queue, using: block)
    }
    return PlaceEventObservation(center: center, observers: observers)
  }
}
