import Foundation

/// CoreLocation's `CLFloor`: the floor of a building a location is on. `CLLocation.floor` is
/// always `nil` on Linux (a GNSS receiver knows no floors), as on iOS outside mapped venues.
open class CLFloor: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: its one stored property is a `let` Int.

  /// The floor, relative to the ground floor (0); negative below it.
  public let level: Int

  init(level: Int) {
    self.level = level
    super.init()
  }

  /// The floor itself: a `CLFloor` never changes.
  open func copy(with zone: NSZone? = nil) -> Any { self }
}
