import FoundationEssentials
import WaymarkCore

extension Monitor {
  /// A change of a condition's state, CoreLocation's `CLMonitor.Event`.
  public struct Event: Sendable, Hashable, Codable {
    /// The state of a condition.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
      /// Not known yet: no fix has decided it since the condition was added.
      case unknown
      /// The device is confirmed inside the circle.
      case satisfied
      /// The device is confirmed outside the circle (beyond its exit radius).
      case unsatisfied
    }

    /// The identifier the condition was added under.
    public var identifier: String
    /// The state the condition entered.
    public var state: State
    /// Fix time of the change (UTC): the first fix inside (or the interpolated crossing) for
    /// `.satisfied`, the last fix inside for `.unsatisfied` after a stay, the deciding fix for
    /// an `.unsatisfied` that ends an `.unknown`. For the event recorded by `add`, the time of
    /// the last fix the monitor had accepted, or `Date.distantPast` before any.
    public var date: Date
    /// The condition.
    public var condition: CircularGeographicCondition

    /// Creates an event.
    public init(
      identifier: String, state: State, date: Date, condition: CircularGeographicCondition
    ) {
      self.identifier = identifier
      self.state = state
      self.date = date
      self.condition = condition
    }
  }

  /// What the monitor knows of one condition, CoreLocation's `CLMonitor.Record`.
  public struct Record: Sendable, Hashable {
    /// The condition.
    public var condition: CircularGeographicCondition
    /// The last event of the condition: its current state and since when. Right after `add`,
    /// the assumed state.
    public var lastEvent: Event

    /// Creates a record.
    public init(condition: CircularGeographicCondition, lastEvent: Event) {
      self.condition = condition
      self.lastEvent = lastEvent
    }
  }
}
