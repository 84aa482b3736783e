import FoundationEssentials
import WaymarkCore

/// A place event as stored: class, time, place, where it was decided and why (JSON).
public struct StoredEvent: Sendable, Hashable {
  /// `ARRIVAL` or `DEPARTURE`.
  public var className: String
  /// Event time.
  public var time: Date
  /// The place.
  public var placeID: String
  /// Position of the deciding fix, when known.
  public var coordinate: Coordinate?
  /// For a departure, the matching arrival time.
  public var arrival: Date?
  /// The reason as a JSON object.
  public var reasonJSON: String
  /// When the event's place was removed from the store; `nil` while it is there.
  public var placeRemoved: Date?

  /// Creates a stored event.
  public init(
    className: String, time: Date, placeID: String, coordinate: Coordinate?, arrival: Date?,
    reasonJSON: String, placeRemoved: Date? = nil
  ) {
    self.className = className
    self.time = time
    self.placeID = placeID
    self.coordinate = coordinate
    self.arrival = arrival
    self.reasonJSON = reasonJSON
    self.placeRemoved = placeRemoved
  }

  /// The stored form of `event`; the reason is `reasonJSON` when given, else
  /// ``EventReasonJSON/encode(_:)`` of the event's reason.
  public init(_ event: PlaceEvent, reasonJSON: String? = nil) {
    switch event {
    case .arrival(let arrival):
      self.init(
        className: event.className, time: arrival.time, placeID: arrival.placeID,
        coordinate: arrival.coordinate, arrival: nil,
        reasonJSON: reasonJSON ?? EventReasonJSON.encode(arrival.reason))
    case .departure(let departure):
      self.init(
        className: event.className, time: departure.time, placeID: departure.placeID,
        coordinate: departure.coordinate, arrival: departure.arrival,
        reasonJSON: reasonJSON ?? EventReasonJSON.encode(departure.reason))
    }
  }
}
