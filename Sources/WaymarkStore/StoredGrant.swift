import Foundation

/// A person's decision about one client's access to location, as stored.
///
/// The same records serve the in-process consent check and the daemon's enforcement (DESIGN §3).
/// "Allow once" lives only in the process and is never stored.
public struct StoredGrant: Sendable, Hashable {
  /// How much access was granted.
  public enum Level: String, Sendable, Hashable, CaseIterable {
    /// Denied.
    case never
    /// While the client is in use (in the foreground).
    case whenInUse
    /// Always, including background monitoring.
    case always
  }

  /// How precise the locations given to the client are.
  public enum Accuracy: String, Sendable, Hashable, CaseIterable {
    /// Full precision.
    case full
    /// Coordinates snapped to a coarse grid.
    case reduced
  }

  /// The client's identifier (such as an executable path or an application id).
  public var clientID: String
  /// The level granted.
  public var level: Level
  /// The accuracy granted.
  public var accuracy: Accuracy
  /// When the decision was made.
  public var grantedAt: Date

  /// Creates a grant.
  public init(clientID: String, level: Level, accuracy: Accuracy, grantedAt: Date) {
    self.clientID = clientID
    self.level = level
    self.accuracy = accuracy
    self.grantedAt = grantedAt
  }
}
