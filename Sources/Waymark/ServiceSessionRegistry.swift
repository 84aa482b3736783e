import FoundationEssentials
import WaymarkCore

/// The sessions this process holds, and what they need together: what
/// ``LocationUpdate/liveUpdates(_:source:)`` reads instead of asking on its own.
final class ServiceSessionRegistry: Sendable {
  /// What the held sessions need together.
  struct Need: Sendable, Hashable {
    /// The most any held session asks for; `nil` when none is held (the implicit session).
    var requirement: ServiceSession.AuthorizationRequirement?
    /// Whether a held session gave a full-accuracy purpose.
    var fullAccuracy = false
    /// Whether locations flow only while a session is held
    /// (``ServiceSession/requiresExplicitSessions``).
    var isRequired = false

    /// Whether at least one session is held.
    var isHeld: Bool { requirement != nil }
  }

  private struct State {
    var sessions: [Int: (ServiceSession.AuthorizationRequirement, fullAccuracy: Bool)] = [:]
    var next = 0
    var isRequired: Bool

    var need: Need {
      Need(
        requirement: sessions.values.map(\.0).max(),
        fullAccuracy: sessions.values.contains { $0.fullAccuracy }, isRequired: isRequired)
    }
  }

  /// The process's registry.
  static let shared = ServiceSessionRegistry(
    isRequired: ProcessInfo.processInfo.environment["WAYMARK_REQUIRE_SERVICE_SESSION"] == "1")

  private let state: Locked<State>
  /// The need now, then each change.
  let changes: Broadcast<Need>

  init(isRequired: Bool) {
    let initial = State(isRequired: isRequired)
    state = Locked(initial)
    changes = Broadcast(initial: initial.need, replaysLatest: true)
  }

  /// What the held sessions need now.
  var need: Need { state.withLock { $0.need } }

  /// Counts a session in; returns its token for ``release(_:)``.
  func hold(_ requirement: ServiceSession.AuthorizationRequirement, fullAccuracy: Bool) -> Int {
    change { state in
      defer { state.next += 1 }
      state.sessions[state.next] = (requirement, fullAccuracy)
      return state.next
    }
  }

  /// Counts the session of `token` out.
  func release(_ token: Int) {
    change { _ = $0.sessions.removeValue(forKey: token) }
  }

  /// Sets whether a session is required.
  func setRequired(_ isRequired: Bool) {
    change { $0.isRequired = isRequired }
  }

  /// Applies `body` and tells ``changes`` (in the order of the changes) when the need moved.
  private func change<Result>(_ body: (inout State) -> Result) -> Result {
    state.withLock { state in
      let before = state.need
      let result = body(&state)
      let after = state.need
      // `send` never runs subscriber code: sending under the lock keeps the order of changes.
      if after != before { changes.send(after) }
      return result
    }
  }
}
