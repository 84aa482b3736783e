import Foundation
import Waymark

/// CoreLocation's `CLLocationUpdate`: one update of ``liveUpdates(_:)``, a ``CLLocation`` (or
/// none) and the diagnoses of CoreLocation 17 and 18, from Waymark's `LocationUpdate`.
///
/// ```swift
/// for try await update in CLLocationUpdate.liveUpdates() {
///   if let location = update.location, location.horizontalAccuracy < 50 { print(location) }
///   if update.authorizationDenied { print("run `waymark auth` to allow this program") }
/// }
/// ```
public struct CLLocationUpdate: Sendable {
  /// The location, or `nil` when the update only tells why there is none (or its location has
  /// no error estimate: gpsd's first report of a session).
  public let location: CLLocation?
  /// Whether the device stands still (Waymark's `LocationUpdate.isStationary`).
  public let isStationary: Bool
  /// The program's grant says never.
  public let authorizationDenied: Bool
  /// Location services are off for every program.
  public let authorizationDeniedGlobally: Bool
  /// Always `false`: iOS raises it when a device management profile or parental controls
  /// restrict location services, and Linux has neither (services switched off system-wide are
  /// ``authorizationDeniedGlobally``).
  public let authorizationRestricted: Bool
  /// A person is being asked whether this program may have locations.
  public let authorizationRequestInProgress: Bool
  /// A held `CLServiceSession` needs `always` and the grant is when-in-use.
  public let insufficientlyInUse: Bool
  /// No location can be had now (the source is absent or has no fix).
  public let locationUnavailable: Bool
  /// The grant is for reduced accuracy.
  public let accuracyLimited: Bool
  /// An explicit service session is required and none is held.
  public let serviceSessionRequired: Bool
  /// The Waymark update this one shows.
  public let waymarkUpdate: LocationUpdate

  /// CoreLocation 18's name for ``isStationary``.
  public var stationary: Bool { isStationary }

  /// The update of a Waymark update: its location as a ``CLLocation``, the same diagnoses.
  public init(_ update: LocationUpdate) {
    // A location without an error estimate is invalid to CoreLocation (horizontalAccuracy −1):
    // the update carries none, as iOS's never carries an invalid one.
    location = update.location.flatMap { $0.horizontalAccuracy == nil ? nil : CLLocation($0) }
    isStationary = update.isStationary
    authorizationDenied = update.authorizationDenied
    authorizationDeniedGlobally = update.authorizationDeniedGlobally
    authorizationRestricted = false
    authorizationRequestInProgress = update.authorizationRequestInProgress
    insufficientlyInUse = update.insufficientlyInUse
    locationUnavailable = update.locationUnavailable
    accuracyLimited = update.accuracyLimited
    serviceSessionRequired = update.serviceSessionRequired
    waymarkUpdate = update
  }

  /// CoreLocation's `liveUpdates(_:)`: the updates of `configuration` from where the
  /// environment says (waymarkd, else gpsd; `WAYMARK_SIMULATED_LOG` replays a log), as
  /// `LocationUpdate.liveUpdates(_:source:)` delivers them.
  ///
  /// - Parameter configuration: the activity.
  /// - Returns: the updates, for `for try await`.
  public static func liveUpdates(_ configuration: LiveConfiguration = .default) -> Updates {
    Updates(base: LocationUpdate.liveUpdates(configuration.waymarkConfiguration))
  }

  /// The updates of `configuration` from `source` (a log, gpsd, the daemon).
  ///
  /// - Parameters:
  ///   - configuration: the activity.
  ///   - source: where locations come from.
  /// - Returns: the updates, for `for try await`.
  public static func liveUpdates(_ configuration: LiveConfiguration = .default, source: LiveSource)
    -> Updates
  {
    Updates(base: LocationUpdate.liveUpdates(configuration.waymarkConfiguration, source: source))
  }

  /// CoreLocation's `CLLocationUpdate.Updates`: the sequence of ``liveUpdates(_:)``.
  public struct Updates: AsyncSequence, Sendable {
    /// Each element is an update.
    public typealias Element = CLLocationUpdate
    let base: LocationUpdate.Updates

    /// Starts a session: it runs until the iterator is dropped or the task cancelled.
    public func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(base: base.makeAsyncIterator())
    }

    /// The iterator of a session.
    public struct AsyncIterator: AsyncIteratorProtocol {
      var base: AsyncThrowingStream<LocationUpdate, any Error>.Iterator

      /// The next update; `nil` when the source ended.
      public mutating func next() async throws -> CLLocationUpdate? {
        try await base.next().map(CLLocationUpdate.init)
      }
    }
  }
}
