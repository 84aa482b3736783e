import FoundationEssentials
import Waymark
import WaymarkCore

/// The values of the monitors waymarkd holds for apps (protocol 1.3, `MONITOR`): what the
/// broker and the daemon's ``HeldMonitorKeeper`` exchange.
package enum HeldMonitor {
  /// Which monitor: the peer's uid and client id (`<user>:<exe>`, as its grant knows it), both
  /// from the kernel at accept, and the name the app gave. Another user's app, or another
  /// program of the same user, never reaches a monitor it did not create.
  package struct Key: Sendable, Hashable {
    /// The peer's uid (`SO_PEERCRED`).
    package var uid: UInt32
    /// The peer's client id.
    package var clientID: String
    /// The monitor's name.
    package var name: String

    /// Creates a key.
    package init(uid: UInt32, clientID: String, name: String) {
      self.uid = uid
      self.clientID = clientID
      self.name = name
    }
  }

  /// One condition an app adds: a circle, its identifier and the state to assume.
  package struct Condition: Sendable, Hashable {
    /// The identifier events carry.
    package var identifier: String
    /// The circle.
    package var circle: Monitor.CircularGeographicCondition
    /// The state to start from (as `Monitor.add(_:identifier:assuming:)`).
    package var assumed: Monitor.Event.State

    /// Creates a condition.
    package init(
      identifier: String, circle: Monitor.CircularGeographicCondition,
      assumed: Monitor.Event.State
    ) {
      self.identifier = identifier
      self.circle = circle
      self.assumed = assumed
    }
  }

  /// One event of a held monitor, with its place in the monitor's queue.
  package struct Event: Sendable, Hashable {
    /// The monitor.
    package var key: Key
    /// Its sequence number in the monitor's queue, from 1, increasing by 1.
    package var sequence: Int64
    /// The condition's identifier.
    package var identifier: String
    /// The state the condition entered.
    package var state: Monitor.Event.State
    /// Fix time of the change (UTC).
    package var date: Date

    /// Creates an event.
    package init(
      key: Key, sequence: Int64, identifier: String, state: Monitor.Event.State, date: Date
    ) {
      self.key = key
      self.sequence = sequence
      self.identifier = identifier
      self.state = state
      self.date = date
    }
  }

  /// A page of a monitor's queue, for an app catching up.
  package struct Backlog: Sendable, Hashable {
    /// The events after the app's cursor, oldest first (at most a page).
    package var events: [Event]
    /// Events after the cursor that were dropped at the bound before the app read them.
    package var lost: Int64
    /// Whether more events follow this page.
    package var more: Bool
    /// The sequence number the monitor's next event will get (1 for a new or unknown
    /// monitor): a cursor at or past it was given by another store (a wiped or replaced one).
    package var next: Int64

    /// Creates a page.
    package init(events: [Event], lost: Int64, more: Bool, next: Int64 = 1) {
      self.events = events
      self.lost = lost
      self.more = more
      self.next = next
    }
  }

  /// Why a `MONITOR` request was refused; `message` goes back in an `ERROR`.
  package struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message sent back (without the `MONITOR: ` prefix).
    package var message: String

    /// Creates a refusal.
    package init(_ message: String) { self.message = message }

    /// The message.
    package var description: String { message }
  }

  /// The longest monitor name, condition identifier or group, in UTF-8 bytes.
  package static let maximumNameBytes = 64
  /// The most conditions one held monitor may have.
  package static let maximumConditions = 64
  /// The most events kept per held monitor; past it the oldest are dropped (and counted as
  /// lost for the app).
  package static let maximumEvents = 1000
  /// The most held monitors one app (uid and client id) may have.
  package static let maximumMonitorsPerApp = 4
  /// The most held monitors one uid may have, all its programs together.
  package static let maximumMonitorsPerUser = 16
  /// The most events one answer to `events` carries (a page: it fits the socket's buffer).
  package static let pageSize = 200
  /// Changes (`add`, `remove`, `delete`) one uid may make per second on average, and at once.
  package static let changesPerSecond: Double = 20
  /// Changes one uid may make at once.
  package static let changeBurst: Double = 40

  /// Why `text` cannot be a name or identifier; `nil` when it can: not empty, at most
  /// ``maximumNameBytes`` bytes, no control, format or separator character.
  package static func problem(with text: String) -> String? {
    Place.textProblem(text, maximumBytes: maximumNameBytes)
  }
}
