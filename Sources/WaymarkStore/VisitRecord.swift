import FoundationEssentials
import WaymarkCore

/// A visit as stored, with its row id, its place as it was when the visit was recorded, and
/// whether that place has been removed since.
public struct VisitRecord: Sendable, Hashable {
  /// The row id.
  public var id: Int64
  /// The visit.
  public var visit: Visit
  /// The place's name, centre and descriptive fields when the visit was recorded (for visits
  /// recorded before schema version 4: when the store was upgraded).
  public var place: PlaceSnapshot
  /// When the visit's place was removed from the store; `nil` while it is there.
  ///
  /// A place added later with the same id is another place: its visits have `nil` here and the
  /// removed one's keep their time.
  public var placeRemoved: Date?
  /// The device whose visit it is (``StoreDevice``).
  public var device: String

  /// Creates a record.
  public init(
    id: Int64, visit: Visit, place: PlaceSnapshot, placeRemoved: Date? = nil,
    device: String = StoreDevice.local
  ) {
    self.id = id
    self.visit = visit
    self.place = place
    self.placeRemoved = placeRemoved
    self.device = device
  }
}
