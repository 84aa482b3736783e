import FoundationEssentials
import WaymarkClient
import WaymarkCore

/// A statement of what this program needs from location services while it holds it:
/// CoreLocation 18's `CLServiceSession`.
///
/// ```swift
/// let session = ServiceSession(authorization: .always, fullAccuracyPurposeKey: "Turn-by-turn")
/// for await diagnostic in session.diagnostics {
///   if diagnostic.alwaysAuthorizationDenied { print("run `waymark auth grant … always`") }
/// }
/// ```
///
/// Creating a session asks, at once, for what it states (through waymarkd's agent when the
/// daemon answers, else this process's ``AuthorizationCenter``); its ``diagnostics`` then say,
/// each time something changes, why the program does not get what it asked for. While at
/// least one session is held (not invalidated, not released), ``LocationUpdate/liveUpdates(_:source:)``
/// and ``Monitor/init(named:source:directory:configuration:)`` take their need from the
/// sessions instead of asking for when-in-use on their own (the *implicit* session of iOS 18);
/// with ``requiresExplicitSessions`` set they deliver no location while none is held.
///
/// The source is chosen as ``LiveSource/automatic`` chooses it. Over waymarkd a session is a
/// connection of its own that sends `SESSION` (protocol 1.3): the daemon asks its agent on the
/// session's behalf, with the purpose, and re-sends what it grants whenever that changes.
public final class ServiceSession: Sendable {
  /// How much authorization a session needs: CoreLocation's
  /// `CLServiceSession.AuthorizationRequirement`.
  public enum AuthorizationRequirement: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Nothing is asked; the session only keeps updates going under whatever grant exists.
    case none
    /// Locations while the program runs (a `whenInUse` grant).
    case whenInUse
    /// Locations and the daemon's place events and visits (an `always` grant).
    case always

    /// The grant level to ask for; `nil` for ``none``.
    var level: GrantLevel? {
      switch self {
      case .none: nil
      case .whenInUse: .whenInUse
      case .always: .always
      }
    }

    private var rank: Int {
      switch self {
      case .none: 0
      case .whenInUse: 1
      case .always: 2
      }
    }

    /// Orders requirements by how much they ask: `none` < `whenInUse` < `always`.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
  }

  /// The longest purpose sent or shown, in Unicode scalars; a longer one is cut there and
  /// ends with `…`.
  public static let maximumPurposeLength = 200

  /// What the session asks for.
  public let authorization: AuthorizationRequirement
  /// Why the program needs full accuracy, shown to the person deciding (the agent's question);
  /// `nil` when the session does not ask for full accuracy. On iOS it names an entry of the
  /// app's `Info.plist`; Linux programs have none, so it is the text itself (cut at
  /// ``maximumPurposeLength`` scalars).
  public let fullAccuracyPurposeKey: String?

  private let reports: Broadcast<Diagnostic>
  private let worker: Locked<Task<Void, Never>?>
  private let registration: Int

  /// Holds a session stating `authorization` (and full accuracy, when a purpose is given), on
  /// the automatic source (waymarkd when it answers, else this process's grant).
  ///
  /// - Parameters:
  ///   - authorization: what the program needs.
  ///   - fullAccuracyPurposeKey: why it needs full accuracy, or `nil`.
  public convenience init(
    authorization: AuthorizationRequirement, fullAccuracyPurposeKey: String? = nil
  ) {
    self.init(
      authorization: authorization, fullAccuracyPurposeKey: fullAccuracyPurposeKey,
      source: .automatic)
  }

  /// Holds a session stating `authorization` on `source` (the daemon, gpsd or a fix source
  /// under a client id and an ``AuthorizationCenter``).
  ///
  /// - Parameters:
  ///   - authorization: what the program needs.
  ///   - fullAccuracyPurposeKey: why it needs full accuracy, or `nil`.
  ///   - source: whose grant the session asks for and watches.
  public init(
    authorization: AuthorizationRequirement, fullAccuracyPurposeKey: String? = nil,
    source: LiveSource
  ) {
    self.authorization = authorization
    let purpose = fullAccuracyPurposeKey.map { LogText.bounded($0, to: Self.maximumPurposeLength) }
    self.fullAccuracyPurposeKey = purpose
    let reports = Broadcast<Diagnostic>(replaysLatest: true)
    self.reports = reports
    registration = ServiceSessionRegistry.shared.hold(
      authorization, fullAccuracy: purpose != nil)
    let work = ServiceSessionWorker(
      requirement: authorization, purpose: purpose, reports: reports)
    worker = Locked(Task { await work.run(on: source) })
  }

  /// CoreLocation's `CLServiceSession.session(authorization:)`: holds a session on the
  /// automatic source.
  ///
  /// - Parameters:
  ///   - authorization: what the program needs.
  ///   - fullAccuracyPurposeKey: why it needs full accuracy, or `nil`.
  /// - Returns: the held session.
  public static func session(
    authorization: AuthorizationRequirement, fullAccuracyPurposeKey: String? = nil
  ) -> ServiceSession {
    ServiceSession(authorization: authorization, fullAccuracyPurposeKey: fullAccuracyPurposeKey)
  }

  deinit { invalidate() }

  /// The session's diagnoses: the current one first, then each change. The sequence ends when
  /// the session is invalidated (or released), or when waymarkd closes its connection.
  public var diagnostics: AsyncStream<Diagnostic> { reports.subscribe() }

  /// Stops holding the session: no longer counted by live updates and monitors, its daemon
  /// connection closed, its ``diagnostics`` ended. Later calls do nothing.
  public func invalidate() {
    let task = worker.withLock { task in
      defer { task = nil }
      return task
    }
    guard let task else { return }
    task.cancel()
    ServiceSessionRegistry.shared.release(registration)
    reports.finish()
  }

  /// Whether live updates and monitors deliver locations only while a session is held
  /// (iOS's `NSLocationRequireExplicitServiceSession`). Without one they send an update with
  /// ``LocationUpdate/serviceSessionRequired`` and no location. Initially `true` when the
  /// environment variable `WAYMARK_REQUIRE_SERVICE_SESSION` is `1`, else `false`.
  public static var requiresExplicitSessions: Bool {
    get { ServiceSessionRegistry.shared.need.isRequired }
    set { ServiceSessionRegistry.shared.setRequired(newValue) }
  }

}
