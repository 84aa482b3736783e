import WaymarkCore

/// A receiver of every place event besides the delegate and the streams, called synchronously
/// in the same order: the bridge to Foundation's `NotificationCenter` (module
/// `WaymarkNotifications`) is one. Keeping it a protocol keeps Foundation's notification machinery,
/// and the ICU it links, out of programs that do not post notifications, such as `waymarkd`.
public protocol PlaceEventPoster: Sendable {
  /// Called for each event of `monitor` on the thread that delivers events, after the delegate,
  /// never concurrently for one monitor.
  func post(_ event: PlaceEvent, from monitor: PlaceMonitor)
}
