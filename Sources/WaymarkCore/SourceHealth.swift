import FoundationEssentials

/// The condition of a fix source, reported alongside its fixes.
///
/// A change of health never ends a location stream; it is reported and the source goes on.
public struct SourceHealth: Sendable, Hashable {
  /// Whether the service behind the source (gpsd) answers.
  public enum Reachability: Sendable, Hashable {
    /// Not tried yet.
    case unknown
    /// Connected.
    case reachable
    /// Could not connect, or the connection was lost.
    case unreachable
  }

  /// Whether the service answers.
  public var service: Reachability
  /// Whether a receiver is attached (`nil` while unknown).
  public var devicePresent: Bool?
  /// The device path, when known.
  public var device: String?
  /// Mode of the latest fix.
  public var mode: FixMode
  /// Fix time of the latest fix with a position.
  public var lastFixTime: Date?
  /// The latest error, readable by a person, without coordinates.
  public var lastError: String?
  /// How many reconnection attempts in a row have failed (0 while connected).
  public var reconnectAttempt: Int

  /// Creates a health report.
  public init(
    service: Reachability = .unknown,
    devicePresent: Bool? = nil,
    device: String? = nil,
    mode: FixMode = .unknown,
    lastFixTime: Date? = nil,
    lastError: String? = nil,
    reconnectAttempt: Int = 0
  ) {
    self.service = service
    self.devicePresent = devicePresent
    self.device = device
    self.mode = mode
    self.lastFixTime = lastFixTime
    self.lastError = lastError
    self.reconnectAttempt = reconnectAttempt
  }
}
