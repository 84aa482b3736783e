import FoundationEssentials

/// A stay at a place: from arrival to departure, or still open.
public struct Visit: Sendable, Hashable, TimeSpan {
  /// The place visited.
  public var placeID: String
  /// When the device arrived.
  public var arrivalDate: Date
  /// When the device left; `nil` while the visit is open.
  public var departureDate: Date?
  /// Fixes seen inside during the visit.
  public var fixCount: Int
  /// Best horizontal accuracy seen during the visit, metres.
  public var bestAccuracyMeters: Double?
  /// Where the fixes came from (device path, log file, simulator name).
  public var source: String?

  /// Creates a visit.
  public init(
    placeID: String, arrivalDate: Date, departureDate: Date? = nil, fixCount: Int = 0,
    bestAccuracyMeters: Double? = nil, source: String? = nil
  ) {
    self.placeID = placeID
    self.arrivalDate = arrivalDate
    self.departureDate = departureDate
    self.fixCount = fixCount
    self.bestAccuracyMeters = bestAccuracyMeters
    self.source = source
  }
}
