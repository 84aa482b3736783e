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
  /// An "allow once" answer (or a denial counted once): valid for this connection only, and
  /// ended by a revocation of the client id or a reset of the grants.
  var once: AuthorizationState?
  /// Whether location services are enabled system-wide.
  var servicesEnabled = true
  /// What the client watches, or `nil` when it does not.
  var watch: DaemonRequest.Watch?
  /// The service session the client holds (`SESSION`, protocol 1.3), or `nil`.
  var serviceSession: DaemonRequest.SessionOptions?
  /// Whether the client answers requests as an agent (a configured agent that sent AGENT).
  var isAgent = false
  /// Whether its agent answers from a script (`AGENT` with `"scripted":true`).
  var isScriptedAgent = false
  /// The state the client was last told (`AUTHORIZATION`).
  var announced: AuthorizationState?
  /// The location last delivered, as delivered (snapped for a reduced client): the distance
  /// filter measures from it.
  var lastDelivered: Location?
  /// The held monitors this connection reads (`MONITOR` `events`), by name: the last sequence
  /// number sent, and whether the backlog is all sent (live events flow only then).
  var heldReads: [String: (lastSent: Int64, caughtUp: Bool)] = [:]

  init(identity: PeerIdentity) {
    self.identity = identity
  }

  /// The authorization in force (``AuthorizationResolution``): the system switch, then the
  /// stored grant, then "once".
  var effective: AuthorizationState {
    AuthorizationResolution.resolve(
      servicesEnabled: servicesEnabled, stored: { stored }, session: { once }
    ).state
  }

  /// What this connection receives of `data` now: ``Disclosure/release(_:under:isOperator:)``
  /// for its authorization in force and its kernel uid. Every output path asks this.
  func disclosure(of data: Disclosure) -> Disclosure.Release {
    Disclosure.release(data, under: effective, isOperator: identity.uid == 0)
  }

  /// Whether the client gets coarse positions only (its grant, or its own choice).
  var isReduced: Bool { disclosure(of: .position) == .reduced || watch?.reduced == true }

  /// Whether ARRIVAL/DEPARTURE objects go to this client: it asked for them, in a `WATCH` of
  /// full positions, and may have its whereabouts.
  var receivesEvents: Bool {
    watch?.events == true && watch?.reduced != true && disclosure(of: .whereabouts) == .full
  }

  /// Whether VISIT objects go to this client: the rule of place events (a stay says where the
  /// device stayed and when).
  var receivesVisits: Bool {
    watch?.visits == true && watch?.reduced != true && disclosure(of: .whereabouts) == .full
  }

  /// Whether the client may have held monitors (its own choice of reduced positions in a
  /// `WATCH` aside: a held monitor is not a location stream).
  var mayHoldMonitors: Bool { disclosure(of: .whereabouts) == .full }

  /// The state to announce, when it differs from what the client was last told.
  mutating func authorizationChange() -> AuthorizationState? {
    let now = effective
    guard now != announced else { return nil }
    announced = now
    return now
  }

  /// Whether to send `location` (the raw, full-accuracy location of a fix).
  ///
  /// Nothing for an unauthorized or non-watching client. A reduced client is measured on
  /// snapped locations only (its distance filter never sees a raw one), and gets a location
  /// only when `release` (its client id's, shared by all its connections) allows one: once per
  /// `policy.minimumInterval` of fix time, on interval boundaries. The caller records the
  /// release when this says yes.
  mutating func shouldDeliver(
    _ location: Location, reduced policy: ReducedAccuracy, release: ReducedRelease
  ) -> Bool {
    guard let watch, disclosure(of: .position) != .withheld else { return false }
    let reduced = isReduced
    if reduced,
      !release.mayRelease(at: location.timestamp, interval: policy.minimumInterval)
    {
      return false
    }
    let delivered = reduced ? policy.snap(location) : location
    if let distance = watch.distanceMeters, let last = lastDelivered,
      delivered.distance(from: last) < distance
    {
      return false
    }
    lastDelivered = delivered
    return true
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
