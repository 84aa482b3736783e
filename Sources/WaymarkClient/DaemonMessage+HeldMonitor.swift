import FoundationEssentials
import WaymarkCore

extension DaemonMessage {
  /// `MONITOR` (protocol 1.3): the daemon's answer about a monitor it holds for this program.
  public struct HeldMonitorAnswer: Sendable, Hashable {
    /// The monitor's name.
    public var name: String
    /// The request answered: `add`, `remove`, `delete` or `events`.
    public var operation: String
    /// After `add`, `remove` or `delete`: how many conditions the monitor has.
    public var conditionCount: Int?
    /// After `events`: the sequence number of the last event sent (or the cursor asked from).
    public var last: Int?
    /// After `events`: events after the cursor dropped at the bound before they were read.
    public var lost: Int?
    /// After `events`: whether more events are queued (ask again from ``last``).
    public var more: Bool?
    /// After `events`: the sequence number the monitor's next event will get.
    public var next: Int?

    /// Creates an answer.
    public init(
      name: String, operation: String, conditionCount: Int? = nil, last: Int? = nil,
      lost: Int? = nil, more: Bool? = nil, next: Int? = nil
    ) {
      self.name = name
      self.operation = operation
      self.conditionCount = conditionCount
      self.last = last
      self.lost = lost
      self.more = more
      self.next = next
    }
  }

  /// `MONITOR_EVENT` (protocol 1.3): one event of a monitor the daemon holds for this program.
  public struct HeldMonitorEvent: Sendable, Hashable {
    /// The monitor's name.
    public var name: String
    /// The event's number in the monitor's queue, from 1, increasing by 1, never reused.
    public var sequence: Int
    /// The condition's identifier.
    public var identifier: String
    /// Whether the condition became satisfied (entering) rather than unsatisfied (leaving).
    public var isSatisfied: Bool
    /// The fix time of the change.
    public var date: Date

    /// Creates an event.
    public init(name: String, sequence: Int, identifier: String, isSatisfied: Bool, date: Date) {
      self.name = name
      self.sequence = sequence
      self.identifier = identifier
      self.isSatisfied = isSatisfied
      self.date = date
    }
  }

  static func heldMonitorAnswer(_ members: Members) throws(DaemonMessageError)
    -> HeldMonitorAnswer
  {
    HeldMonitorAnswer(
      name: try members.string("name"), operation: try members.string("op"),
      conditionCount: try members.optionalInteger("conditions"),
      last: try members.optionalInteger("last"), lost: try members.optionalInteger("lost"),
      more: try members.optionalBool("more"), next: try members.optionalInteger("next"))
  }

  static func heldMonitorEvent(_ members: Members) throws(DaemonMessageError) -> HeldMonitorEvent {
    let state = try members.parsed("state") { ["satisfied": true, "unsatisfied": false][$0] }
    return HeldMonitorEvent(
      name: try members.string("name"), sequence: try members.integer("sequence"),
      identifier: try members.string("id"), isSatisfied: state,
      date: try members.parsed("time", Timestamp.parse))
  }
}
