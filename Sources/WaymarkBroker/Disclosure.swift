import WaymarkCore

/// Data about the device's position that the broker can send a client, by what it reveals; and
/// the one rule that decides what a client gets of each (``release(_:under:isOperator:)``).
///
/// Every output of the location and NMEA sockets asks this rule, through
/// ``BrokerSession/disclosure(of:)`` (a connection) or directly (a held monitor's grant): a `TPV`,
/// NMEA sentences, a `POLL` answer and `STATUS`'s fix time; `ARRIVAL`/`DEPARTURE`, `VISIT` and
/// a held monitor's events and state. No output path has a rule of its own; what a client chose
/// for itself (a `WATCH` without events, or with `reduced`) can only narrow what the rule
/// releases.
///
/// The rule is the invariant of the security model: a coordinate, or anything derived from one,
/// reaches a principal only under an authorization in force (a grant root or group `waymark`
/// recorded, or an answer a person gave for that connection, which ``AgentQuestions`` accepts
/// only from a privileged agent or on polkit's yes), or when the principal is root.
enum Disclosure: CaseIterable, Sendable {
  /// A position: a `TPV`, NMEA sentences, a `POLL` answer.
  case position
  /// The time of the latest fix alone (`STATUS` `lastFix`): when the device last had a fix.
  case fixTime
  /// Where the device is with respect to places, and when it came and went: `ARRIVAL`,
  /// `DEPARTURE`, `VISIT`, a held monitor's events and state.
  case whereabouts

  /// How much of one kind of data a principal receives.
  enum Release: Comparable, Sendable {
    /// Nothing.
    case withheld
    /// Positions snapped to the reduced-accuracy grid, at most one per interval; no place data.
    case reduced
    /// Everything of the kind, as measured.
    case full
  }

  /// What a principal under `state` (the authorization in force: ``AuthorizationResolution``)
  /// receives of `data`.
  ///
  /// - A position: with `whenInUse` or `always`, reduced or full as granted; else nothing.
  /// - The fix time: to whoever may have a position, and to root (who reads the store anyway).
  /// - Whereabouts: with `always` at full accuracy only. Place events, visits and held monitors
  ///   tell where the device is without the client watching it, and a reduced grant promises
  ///   positions no finer than its grid: a place name with inside or outside is finer.
  ///
  /// - Parameters:
  ///   - isOperator: the principal is root.
  static func release(_ data: Disclosure, under state: AuthorizationState, isOperator: Bool)
    -> Release
  {
    switch data {
    case .position:
      guard state.status.isAuthorized else { return .withheld }
      return state.accuracy == .full ? .full : .reduced
    case .fixTime:
      return isOperator || state.status.isAuthorized ? .full : .withheld
    case .whereabouts:
      return state.status == .authorizedAlways && state.accuracy == .full ? .full : .withheld
    }
  }
}
