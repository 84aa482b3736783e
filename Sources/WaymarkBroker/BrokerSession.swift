import FoundationEssentials
import Waymark
import WaymarkCore

/// What the broker knows and decides about one connected client: its identity, its
/// authorization, what it watches, and what it was last sent. A value with no I/O; the server
/// owns one per connection and acts on its answers.
struct BrokerSession {
  /// Who the peer is.
  let identity: PeerIdentity
  /// The grant recorded for ``PeerIdentity/clientID`` in the store (`notDetermined` without).
  var stored = AuthorizationState(status: .notDetermined)
  /// An "allow once" answer: valid for this connection only.
  var once: AuthorizationState?
  /// Whether location services are enabled system-wide.
  var servicesEnabled = true
  /// What the client watches, or `nil` when it does not.
  var watch: BrokerRequest.WatchOptions?
  /// Whether the client answers requests as an agent.
  var isAgent = false
  /// The state the client was last told (`AUTHORIZATION`).
  var announced: AuthorizationState?
  /// The raw location last delivered (the distance filter measures from it).
  var lastDelivered: Location?
  /// Fix time of the last reduced location delivered.
  var lastReducedTime: Date?
  /// The id of the question asked on this client's behalf, while one is open.
  var openQuestion: Int?

  init(identity: PeerIdentity) {
    self.identity = identity
  }

  /// The authorization in force: the system switch, then the stored grant, then "once".
  var effective: AuthorizationState {
    guard servicesEnabled else { return AuthorizationState(status: .restricted) }
    if stored.status == .notDetermined, let once { return once }
    return stored
  }

  /// Whether the client gets coarse positions only (its grant, or its own choice).
  var isReduced: Bool { effective.accuracy == .reduced || watch?.reduced == true }

  /// Whether ARRIVAL/DEPARTURE objects go to this client: it asked, holds `always`, full.
  var receivesEvents: Bool {
    watch?.events == true && effective.status == .authorizedAlways && !isReduced
  }

  /// The state to announce, when it differs from what the client was last told.
  mutating func authorizationChange() -> AuthorizationState? {
    let now = effective
    guard now != announced else { return nil }
    announced = now
    return now
  }

  /// What to send for `location` (the raw, full-accuracy location of a fix), or `nil`.
  ///
  /// Nothing for an unauthorized or non-watching client; the distance filter is measured on the
  /// raw locations (so snapping never moves a client past it); a reduced client gets at most one
  /// location per `reduced.minimumInterval` of fix time.
  mutating func shouldDeliver(_ location: Location, reduced policy: ReducedAccuracy) -> Bool {
    guard let watch, effective.status.isAuthorized else { return false }
    if let distance = watch.distanceMeters, let last = lastDelivered,
      location.distance(from: last) < distance
    {
      return false
    }
    if isReduced {
      if let last = lastReducedTime,
        location.timestamp.timeIntervalSince(last) < policy.minimumInterval
      {
        return false
      }
      lastReducedTime = location.timestamp
    }
    lastDelivered = location
    return true
  }

  /// Whether this client's agent may answer for `client`: same user, or root's agent.
  func mayAnswer(for client: PeerIdentity) -> Bool {
    isAgent && (identity.uid == 0 || identity.uid == client.uid)
  }
}

extension Fix {
  /// The fix as a reduced-accuracy client receives it: only time, a 2D mode, the coordinate
  /// snapped to the centre of its `policy` grid cell, and `eph` of at least the cell size.
  /// No altitude, speed, course or climb.
  func coarse(_ location: Location, policy: ReducedAccuracy) -> Fix {
    let snapped = policy.snap(location)
    return Fix(
      time: time, mode: .twoDimensional, coordinate: snapped.coordinate,
      horizontalError: max(snapped.horizontalAccuracy ?? policy.gridMeters, 1000))
  }
}
