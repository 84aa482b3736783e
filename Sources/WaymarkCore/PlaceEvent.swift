import FoundationEssentials

/// An arrival at or a departure from a place, with the reason it fired.
public enum PlaceEvent: Sendable, Hashable {
  /// The device arrived at a place.
  case arrival(Arrival)
  /// The device left a place.
  case departure(Departure)

  /// An arrival: the device is confirmed inside the place.
  public struct Arrival: Sendable, Hashable {
    /// Arrival time: the first fix inside, or the interpolated crossing of the radius.
    public var time: Date
    /// The place.
    public var placeID: String
    /// The place's name.
    public var placeName: String
    /// The position of the fix that confirmed the arrival.
    public var coordinate: Coordinate
    /// Why it fired.
    public var reason: EventReason

    /// Creates an arrival.
    public init(
      time: Date, placeID: String, placeName: String, coordinate: Coordinate, reason: EventReason
    ) {
      self.time = time
      self.placeID = placeID
      self.placeName = placeName
      self.coordinate = coordinate
      self.reason = reason
    }
  }

  /// A departure: the device is confirmed outside the place's exit radius.
  public struct Departure: Sendable, Hashable {
    /// Departure time: the last fix inside.
    public var time: Date
    /// The place.
    public var placeID: String
    /// The place's name.
    public var placeName: String
    /// The position of the fix that confirmed the departure.
    public var coordinate: Coordinate
    /// When the matching arrival happened.
    public var arrival: Date
    /// Why it fired.
    public var reason: EventReason

    /// Creates a departure.
    public init(
      time: Date, placeID: String, placeName: String, coordinate: Coordinate, arrival: Date,
      reason: EventReason
    ) {
      self.time = time
      self.placeID = placeID
      self.placeName = placeName
      self.coordinate = coordinate
      self.arrival = arrival
      self.reason = reason
    }

    /// Seconds between arrival and departure.
    public var durationSeconds: Double { time.timeIntervalSince(arrival) }
  }

  /// The event time.
  public var time: Date {
    switch self {
    case .arrival(let arrival): arrival.time
    case .departure(let departure): departure.time
    }
  }

  /// The place the event is about.
  public var placeID: String {
    switch self {
    case .arrival(let arrival): arrival.placeID
    case .departure(let departure): departure.placeID
    }
  }

  /// The NDJSON class: `ARRIVAL` or `DEPARTURE`.
  public var className: String {
    switch self {
    case .arrival: "ARRIVAL"
    case .departure: "DEPARTURE"
    }
  }
}

/// Why a place event fired: the numbers the state machine used.
public struct EventReason: Sendable, Hashable {
  /// Which rule fired, such as `inside`, `outside`, `pass-through`.
  public var rule: String
  /// Distance from the place centre to the deciding fix, metres.
  public var distanceMeters: Double
  /// Horizontal accuracy of the deciding fix, metres (`nil` when unknown).
  public var horizontalAccuracyMeters: Double?
  /// Enter radius used, metres.
  public var enterRadiusMeters: Double
  /// Exit radius used, metres.
  public var exitRadiusMeters: Double
  /// Consecutive confirming fixes seen.
  public var confirmations: Int
  /// Seconds of fix time the new state held before it was confirmed.
  public var dwellSeconds: Double

  /// Creates a reason.
  public init(
    rule: String, distanceMeters: Double, horizontalAccuracyMeters: Double?,
    enterRadiusMeters: Double, exitRadiusMeters: Double, confirmations: Int, dwellSeconds: Double
  ) {
    self.rule = rule
    self.distanceMeters = distanceMeters
    self.horizontalAccuracyMeters = horizontalAccuracyMeters
    self.enterRadiusMeters = enterRadiusMeters
    self.exitRadiusMeters = exitRadiusMeters
    self.confirmations = confirmations
    self.dwellSeconds = dwellSeconds
  }
}
