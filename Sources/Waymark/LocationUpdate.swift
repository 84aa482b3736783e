import FoundationEssentials
import WaymarkCore

/// One update of ``liveUpdates(_:source:)``: CoreLocation's `CLLocationUpdate`, a location (or
/// none) and the diagnosis of why there is none, or what limits it.
///
/// ```swift
/// for try await update in LocationUpdate.liveUpdates() {
///   if let location = update.location { print(location.coordinate) }
///   if update.authorizationDenied { print("run `waymark auth` to allow this program") }
///   if update.isStationary { print("standing still") }
/// }
/// ```
///
/// On iOS an update without a location carries at least one diagnosis; so it does here. The
/// flags are those of CoreLocation 17 and 18, with the meaning they can have on Linux.
public struct LocationUpdate: Sendable, Hashable {
  /// The location, or `nil` when this update only tells why there is none (or that something
  /// changed: a grant, the source's health, stationarity).
  public var location: Location?
  /// Whether the device stands still: raised once the receiver's speed and the spread of its
  /// positions have been low for the configuration's settle time, cleared when it has moved
  /// for its move time (see ``StationaryDetector``). While it is raised, a configuration that
  /// pauses (``LiveConfiguration/pausesWhileStationary``) sends no locations.
  public var isStationary: Bool
  /// This program may not have locations: its grant says never (`waymark auth`, or an agent
  /// denied it).
  public var authorizationDenied: Bool
  /// Location services are off for every program (`/etc/waymark/disabled`, or the daemon
  /// restricts this connection while its source is there).
  public var authorizationDeniedGlobally: Bool
  /// A person is being asked (through the daemon's agent or the terminal) whether this program
  /// may have locations.
  public var authorizationRequestInProgress: Bool
  /// A held ``ServiceSession`` needs `always` and the grant is `whenInUse`. (A Linux program
  /// is in use for as long as it runs, so iOS's other cause, a when-in-use app in the
  /// background, never applies.) Locations still flow under the when-in-use grant.
  public var insufficientlyInUse: Bool
  /// ``ServiceSession/requiresExplicitSessions`` is set and this process holds no session:
  /// no location is delivered until one is held (CoreLocation 18's
  /// `serviceSessionRequired`).
  public var serviceSessionRequired: Bool
  /// No location can be had now: the source (gpsd, or waymarkd, or the receiver behind them)
  /// is unreachable or absent, or no usable fix came for the configuration's stale time.
  /// Cleared by the next location.
  public var locationUnavailable: Bool
  /// The grant is for reduced accuracy: locations are snapped to a grid and thinned in time.
  public var accuracyLimited: Bool

  /// CoreLocation 18's name for ``isStationary``.
  public var stationary: Bool { isStationary }

  /// Creates an update (for tests and sources of one's own; ``liveUpdates(_:source:)`` makes
  /// them).
  public init(
    location: Location? = nil, isStationary: Bool = false, authorizationDenied: Bool = false,
    authorizationDeniedGlobally: Bool = false, authorizationRequestInProgress: Bool = false,
    insufficientlyInUse: Bool = false, locationUnavailable: Bool = false,
    accuracyLimited: Bool = false, serviceSessionRequired: Bool = false
  ) {
    self.location = location
    self.isStationary = isStationary
    self.authorizationDenied = authorizationDenied
    self.authorizationDeniedGlobally = authorizationDeniedGlobally
    self.authorizationRequestInProgress = authorizationRequestInProgress
    self.insufficientlyInUse = insufficientlyInUse
    self.locationUnavailable = locationUnavailable
    self.accuracyLimited = accuracyLimited
    self.serviceSessionRequired = serviceSessionRequired
  }

  /// The updates of `configuration` from `source`: CoreLocation's
  /// `CLLocationUpdate.liveUpdates(_:)`.
  ///
  /// Each iteration starts its own session: it picks the source (``LiveSource/automatic``:
  /// waymarkd when its socket answers, else gpsd on localhost), and then yields an update for
  /// each location that passes the configuration's filters and for each change of the
  /// diagnosis. Its authorization need comes from the ``ServiceSession``s this process holds:
  /// while none is held (the implicit session) it asks for when-in-use authorization when this
  /// program has no grant yet (an update with ``authorizationRequestInProgress`` comes first);
  /// while sessions are held they ask, and an `always` session under a when-in-use grant
  /// raises ``insufficientlyInUse``. With ``ServiceSession/requiresExplicitSessions`` and no
  /// session held, no location goes out (``serviceSessionRequired``).
  /// Ending the iteration (leaving the loop, cancelling its task) stops the source.
  ///
  /// The sequence ends when the source does (a log at its end, the daemon when it closes the
  /// connection), after its last location and an update with ``locationUnavailable``. gpsd is
  /// reconnected to and never ends it.
  ///
  /// - Parameters:
  ///   - configuration: the activity (filters, stationarity, pausing).
  ///   - source: where locations come from.
  /// - Returns: the updates; iterating throws `BrokerError` only when the source is
  ///   ``LiveSource/daemon(socketPath:)`` and the daemon cannot be reached.
  public static func liveUpdates(
    _ configuration: LiveConfiguration = .default, source: LiveSource = .automatic
  ) -> Updates {
    Updates { LiveUpdateSession.start(configuration: configuration, source: source) }
  }

  /// Significant location changes, CoreLocation's `startMonitoringSignificantLocationChanges`:
  /// the updates of ``liveUpdates(_:source:)`` with ``LiveConfiguration/default`` whose
  /// location ``SignificantChangeFilter`` lets through (the first; one at least
  /// `minimumDistanceMeters` from the last one; the first after a gap of `gapSeconds` of fix
  /// time). Updates without a location are left out. Suited to low-rate logging.
  ///
  /// - Parameters:
  ///   - minimumDistanceMeters: how far the device must move, in metres (default 500).
  ///   - gapSeconds: seconds of fix time without a location that make the next one
  ///     significant (default 300).
  ///   - source: where locations come from.
  public static func significantLocationChanges(
    minimumDistanceMeters: Double = 500, gapSeconds: TimeInterval = 300,
    source: LiveSource = .automatic
  ) -> Updates {
    let updates = liveUpdates(.default, source: source)
    return Updates {
      AsyncThrowingStream { continuation in
        let task = Task {
          var filter = SignificantChangeFilter(
            minimumDistanceMeters: minimumDistanceMeters, gapSeconds: gapSeconds)
          do {
            for try await update in updates {
              guard let location = update.location, filter.admit(location) != nil else {
                continue
              }
              continuation.yield(update)
            }
            continuation.finish()
          } catch {
            continuation.finish(throwing: error)
          }
        }
        continuation.onTermination = { _ in task.cancel() }
      }
    }
  }

  /// The updates of a live session, for `for try await`.
  public struct Updates: AsyncSequence, Sendable {
    /// Each element is a location update.
    public typealias Element = LocationUpdate
    private let make: @Sendable () -> AsyncThrowingStream<LocationUpdate, any Error>

    init(_ make: @escaping @Sendable () -> AsyncThrowingStream<LocationUpdate, any Error>) {
      self.make = make
    }

    /// Starts a session: its source runs until the iterator is dropped or the task cancelled.
    public func makeAsyncIterator() -> AsyncThrowingStream<LocationUpdate, any Error>.Iterator {
      make().makeAsyncIterator()
    }
  }
}
