import Foundation
import Waymark

extension CLMonitor {
  /// CoreLocation's `CLMonitor.Event`: a condition's new state, with the diagnoses of
  /// CoreLocation 18 (each event carries the monitor's diagnoses at its time).
  public struct Event: Sendable {
    /// CoreLocation's `CLMonitor.Event.State`.
    public enum State: Int, Sendable, Hashable, CaseIterable {
      /// Not known yet.
      case unknown = 0
      /// The device is inside the circle.
      case satisfied = 1
      /// The device is outside the circle.
      case unsatisfied = 2
      /// The condition is not monitored: unsupported (a beacon), or the monitor could not be
      /// opened (``persistenceUnavailable``).
      case unmonitored = 3

      /// The state of a Waymark event state.
      public init(_ state: Monitor.Event.State) {
        switch state {
        case .unknown: self = .unknown
        case .satisfied: self = .satisfied
        case .unsatisfied: self = .unsatisfied
        }
      }

      /// Waymark's state; `nil` for ``unmonitored``.
      var waymarkState: Monitor.Event.State? {
        switch self {
        case .unknown: .unknown
        case .satisfied: .satisfied
        case .unsatisfied: .unsatisfied
        case .unmonitored: nil
        }
      }
    }

    /// The identifier the condition was added under.
    public let identifier: String
    /// A more specific condition than the one monitored (a beacon's major and minor on iOS):
    /// always `nil` here, circles have none.
    public let refinement: (any CLCondition)?
    /// The state the condition entered.
    public let state: State
    /// When (fix time, UTC).
    public let date: Date
    /// The program's grant says never.
    public let authorizationDenied: Bool
    /// Location services are off for every program.
    public let authorizationDeniedGlobally: Bool
    /// Always `false`: Linux has no device management nor parental controls.
    public let authorizationRestricted: Bool
    /// A person is being asked whether this program may have locations.
    public let authorizationRequestInProgress: Bool
    /// A held `CLServiceSession` needs `always` and the grant is when-in-use.
    public let insufficientlyInUse: Bool
    /// The grant is for reduced accuracy (monitoring needs full accuracy).
    public let accuracyLimited: Bool
    /// Always `false`: a Waymark monitor has no limit on its conditions.
    public let conditionLimitExceeded: Bool
    /// The condition cannot be monitored here (a beacon condition).
    public let conditionUnsupported: Bool
    /// The monitor could not be opened under its name (in use by another run, a name Waymark
    /// refuses, its file unreadable or unwritable): nothing is monitored nor saved.
    public let persistenceUnavailable: Bool
    /// An explicit service session is required and none is held.
    public let serviceSessionRequired: Bool

    init(
      identifier: String, state: State, date: Date, diagnosis: Diagnosis,
      conditionUnsupported: Bool = false
    ) {
      self.identifier = identifier
      refinement = nil
      self.state = state
      self.date = date
      authorizationDenied = diagnosis.authorizationDenied
      authorizationDeniedGlobally = diagnosis.authorizationDeniedGlobally
      authorizationRestricted = false
      authorizationRequestInProgress = diagnosis.authorizationRequestInProgress
      insufficientlyInUse = diagnosis.insufficientlyInUse
      accuracyLimited = diagnosis.accuracyLimited
      conditionLimitExceeded = false
      self.conditionUnsupported = conditionUnsupported
      persistenceUnavailable = diagnosis.persistenceUnavailable
      serviceSessionRequired = diagnosis.serviceSessionRequired
    }
  }

  /// The monitor's diagnoses at one time: from the live updates, and whether it is open.
  struct Diagnosis: Sendable, Hashable {
    var authorizationDenied = false
    var authorizationDeniedGlobally = false
    var authorizationRequestInProgress = false
    var insufficientlyInUse = false
    var accuracyLimited = false
    var serviceSessionRequired = false
    var persistenceUnavailable = false

    /// The diagnoses of `update`, and whether the monitor is open.
    init(_ update: LocationUpdate? = nil, persistenceUnavailable: Bool) {
      authorizationDenied = update?.authorizationDenied ?? false
      authorizationDeniedGlobally = update?.authorizationDeniedGlobally ?? false
      authorizationRequestInProgress = update?.authorizationRequestInProgress ?? false
      insufficientlyInUse = update?.insufficientlyInUse ?? false
      accuracyLimited = update?.accuracyLimited ?? false
      serviceSessionRequired = update?.serviceSessionRequired ?? false
      self.persistenceUnavailable = persistenceUnavailable
    }
  }

  /// CoreLocation's `CLMonitor.Record`: a condition and its last event.
  public struct Record: Sendable {
    /// The condition.
    public let condition: any CLCondition
    /// Its last event: its current state and since when.
    public let lastEvent: Event
  }
}
