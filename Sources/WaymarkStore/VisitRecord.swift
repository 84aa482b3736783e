import WaymarkCore

/// A visit as stored, with its row id and the place's name and centre.
public struct VisitRecord: Sendable, Hashable {
  /// The row id.
  public var id: Int64
  /// The visit.
  public var visit: Visit
  /// The place's name.
  public var placeName: String
  /// The place's centre.
  public var coordinate: Coordinate

  /// Creates a record.
  public init(id: Int64, visit: Visit, placeName: String, coordinate: Coordinate) {
    self.id = id
    self.visit = visit
    self.placeName = placeName
    self.coordinate = coordinate
  }
}
