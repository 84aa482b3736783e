/// Whether this process may receive locations, as CoreLocation's `CLAuthorizationStatus`.
public enum AuthorizationStatus: String, Sendable, Hashable, Codable, CaseIterable {
  /// Nobody has decided yet for this client.
  case notDetermined
  /// Location services are disabled system-wide, or the location source cannot be reached.
  case restricted
  /// The person refused (a `never` grant).
  case denied
  /// Allowed while the application runs (a `whenInUse` grant, or "allow once").
  case authorizedWhenInUse
  /// Allowed at any time, including background monitoring by the daemon (an `always` grant).
  case authorizedAlways

  /// Whether locations may be delivered.
  public var isAuthorized: Bool {
    self == .authorizedWhenInUse || self == .authorizedAlways
  }

  /// Whether a decision exists (anything but ``notDetermined``).
  public var isDecided: Bool { self != .notDetermined }
}

/// How precise the delivered locations may be, as CoreLocation's `CLAccuracyAuthorization`.
public enum AccuracyAuthorization: String, Sendable, Hashable, Codable, CaseIterable {
  /// Locations as precise as the receiver gives them.
  case full
  /// Coordinates snapped to a coarse grid, at a limited rate.
  case reduced
}

/// An authorization status together with the accuracy granted, as one value.
public struct AuthorizationState: Sendable, Hashable {
  /// The status.
  public var status: AuthorizationStatus
  /// The accuracy granted (meaningful when authorized).
  public var accuracy: AccuracyAuthorization

  /// Creates a state.
  public init(status: AuthorizationStatus, accuracy: AccuracyAuthorization = .full) {
    self.status = status
    self.accuracy = accuracy
  }
}
