import FoundationEssentials

/// What a person allowed a client to do.
public enum GrantLevel: String, Sendable, Hashable, Codable, CaseIterable {
  /// Never give this client locations.
  case never
  /// Give locations while the client runs in the foreground.
  case whenInUse
  /// Give locations at any time, including background monitoring.
  case always

  /// Parses `never`, `whenInUse` (also `when-in-use`, `wheninuse`) or `always`.
  public init?(parsing text: String) {
    switch text.lowercased() {
    case "never", "deny", "denied": self = .never
    case "wheninuse", "when-in-use", "when_in_use": self = .whenInUse
    case "always": self = .always
    default: return nil
    }
  }

  /// The status a client with this grant has.
  public var status: AuthorizationStatus {
    switch self {
    case .never: .denied
    case .whenInUse: .authorizedWhenInUse
    case .always: .authorizedAlways
    }
  }
}

/// One recorded decision: a client, the level and accuracy it was granted, and when.
///
/// Record-shaped so that a file, an SQLite table or the daemon's peer-credential checks can all
/// hold the same values. The client id is whatever the application calls itself (for example a
/// reverse-DNS name); the daemon will key the same records by executable and uid. Its `Codable`
/// form is the grants file's record: `client`, `level`, `accuracy`, and `grantedAt` in UTC to
/// the millisecond.
public struct Grant: Sendable, Hashable, Codable {
  /// The client the grant is for.
  public var clientID: String
  /// What was allowed.
  public var level: GrantLevel
  /// Full or reduced accuracy.
  public var accuracy: AccuracyAuthorization
  /// When the decision was made (UTC).
  public var grantedAt: Date

  /// Creates a grant record.
  public init(
    clientID: String, level: GrantLevel, accuracy: AccuracyAuthorization = .full,
    grantedAt: Date
  ) {
    self.clientID = clientID
    self.level = level
    self.accuracy = accuracy
    self.grantedAt = grantedAt
  }

  /// The authorization state this grant gives.
  public var state: AuthorizationState {
    AuthorizationState(status: level.status, accuracy: accuracy)
  }
}

/// Persistent storage of ``Grant`` records, one per client id.
///
/// Implementations: ``FileGrantStore`` (JSON under the state directory), ``InMemoryGrantStore``
/// (tests, benchmarks), and the SQLite store. Every call reads or writes the durable state, so
/// a change made by another process (`waymark auth grant …`) is seen by the next call.
public protocol GrantStore: Sendable {
  /// The grant for `clientID`, or `nil` when none was recorded.
  func grant(for clientID: String) throws -> Grant?
  /// Every grant, sorted by client id.
  func allGrants() throws -> [Grant]
  /// Records `grant`, replacing any earlier grant for the same client.
  func save(_ grant: Grant) throws
  /// Removes the grant of `clientID`. Returns whether there was one.
  @discardableResult func removeGrant(for clientID: String) throws -> Bool
  /// Removes every grant.
  func removeAll() throws
  /// A value that changes whenever another process may have changed the grants, or `nil` when
  /// the store cannot tell cheaply (its reader then re-reads every time).
  func changeMark() throws -> Int64?
  /// The client ids whose authorization was revoked after `mark` (`*`: all, a reset), and the
  /// newest mark; with `mark` `nil`, only the newest mark. Revoking ends an "allow once" too.
  func revocations(after mark: Int64?) throws -> GrantRevocations
}

extension GrantStore {
  /// Cannot tell: `nil`.
  public func changeMark() throws -> Int64? { nil }
  /// Keeps no record of revocations: none.
  public func revocations(after mark: Int64?) throws -> GrantRevocations {
    GrantRevocations(clientIDs: [], mark: mark ?? 0)
  }
}

/// Revocations recorded in a grant store after a mark.
public struct GrantRevocations: Sendable, Hashable {
  /// Client ids revoked, oldest first; `*` for a reset of every grant.
  public var clientIDs: [String]
  /// The newest revocation's mark.
  public var mark: Int64

  /// Creates the list.
  public init(clientIDs: [String], mark: Int64) {
    self.clientIDs = clientIDs
    self.mark = mark
  }
}

/// Grants kept in memory only: for tests and benchmarks.
public final class InMemoryGrantStore: GrantStore {
  private let grants: Locked<[String: Grant]>

  /// Creates a store holding `grants`.
  public init(_ grants: [Grant] = []) {
    self.grants = Locked(Dictionary(grants.map { ($0.clientID, $0) }, uniquingKeysWith: { $1 }))
  }

  public func grant(for clientID: String) throws -> Grant? { grants.withLock { $0[clientID] } }

  public func allGrants() throws -> [Grant] {
    grants.withLock { $0.values.sorted { $0.clientID < $1.clientID } }
  }

  public func save(_ grant: Grant) throws { grants.withLock { $0[grant.clientID] = grant } }

  @discardableResult public func removeGrant(for clientID: String) throws -> Bool {
    grants.withLock { $0.removeValue(forKey: clientID) != nil }
  }

  public func removeAll() throws { grants.withLock { $0.removeAll() } }
}
