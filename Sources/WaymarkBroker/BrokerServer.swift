// Trust boundary of waymarkd's location socket.
//
// Who may connect: anyone who can reach the socket file (mode 0666 in a 0755 runtime
// directory): connecting proves nothing, grants decide.
// How the peer is identified: at accept, from the kernel: SO_PEERCRED's uid, gid and pid and
// SO_PEERGROUPS (PeerCredentials), then the real path of /proc/<pid>/exe read through a pidfd
// (by waymark-identify, the privilege-separated helper, for other users' peers), guarded against
// pid reuse (PeerIdentity). A peer that cannot be identified is closed at once and logged. The
// identity `<user>:<exe>` is the client id of its grant in the daemon's store; clients cannot
// name themselves.
// What a peer without a grant gets: VERSION and AUTHORIZATION (notDetermined or denied), ERROR
// answers, STATUS without any fix time, and the right to REQUEST (which asks an agent of the
// same user, or root's). Never a coordinate.
// Who decides: only programs the operator lists in `agents` (default: the installed
// `waymark`) may be agents; an ASK never goes to, and an ANSWER is never taken from, the
// connection, process or client id that asked (AgentQuestions). An answer persists only from
// root or a member of group `waymark`, or when the DecisionAuthority (polkit) says yes; else it
// counts once, for the asking connection. `waymark auth revoke`/`reset` end a "once" too.
// Reduced accuracy: coarse positions snapped here, never a precise one; one per interval of
// fix time per client id (across connections, for WATCH and POLL alike), released on interval
// boundaries of fix time (ReducedRelease); distance filters measure snapped positions.
// A revoked client is told within `grantRefresh` (0.5 s) and sent no further TPV.
// The NMEA socket (`nmea-socket`, for GeoClue and other NMEA readers) has the same rules: a peer
// is identified at accept; one without a grant is closed at once (and logged); a reduced grant
// gets coarse positions; a peer whose grant goes is closed within `grantRefresh`. Its peers
// only read: what they send is discarded. The optional TCP form (`nmea-tcp`, for OpenCPN, QGIS
// and the like) listens on a loopback address only and identifies a peer through its row in
// /proc/<pid>/net/tcp or tcp6 and /proc/*/fd (PeerIdentity.ofLoopbackTCP, by waymark-identify
// under the unit); a peer it cannot identify is closed.
// Limits that protect the daemon: lines of at most 4,096 bytes (a longer one is an ERROR and a
// close, the framing being lost); at most `maximumClients` connections, and
// `maximumClientsPerUser` per uid (root exempt), more being closed at accept before any /proc
// read; at most `readBudgetBytes` read from one client per round of the loop; at most
// `linesPerSecond` lines (blank ones too) per connection, with a burst of `lineBurst`, a peer
// over it being cut off and logged once; `maximumQuestionsPerUser` open requests and
// `maximumAgentGrantsPerUser` grants made through agents per uid; connect, refuse and
// disconnect lines throttled per uid (LogThrottle); a client whose unsent output passes
// `sendBufferBytes` is disconnected; one thread with poll(2) serves every client, never
// blocking on one (the DecisionAuthority is asked on a thread of its own); the grants are
// re-read only when the store changed (inotify on its directory, then SQLite's data_version;
// at most every `grantRefreshSeconds`); only the broker's thread touches a client: the daemon's
// main loop and the thread that reads gpsd only append to its inbox (when it is full the oldest
// fix goes, nothing else ever; while no client watches, the newest fix is kept for it instead)
// and never wait for a client.
// Held monitors (MONITOR, protocol 1.3; BrokerLoop+Monitors): only a peer holding `always` with
// full accuracy may create, change or read one, keyed by its kernel uid and client id and the
// name it gives; any other gets an ERROR. Bounds: names of 64 bytes without control
// characters, 64 conditions, 4 monitors per program and 16 per uid, 1,000 queued events each,
// 20 changes a second per uid (bursts of 40).

import FoundationEssentials
import Glibc
import Synchronization
import Waymark
import WaymarkClient
import WaymarkCore
import WaymarkIdentify

/// The location broker: `waymarkd`'s Unix socket, serving fixes, place events and authorization
/// to other processes under the grants of the daemon's store.
///
/// One dedicated thread owns the listening socket and every client; ``publish(_:)`` hands fixes
/// and events to it through a bounded inbox and returns at once.
package final class BrokerServer: Sendable {
  /// The protocol minor version this daemon speaks (`proto_minor` of `VERSION`): 3 since
  /// `SESSION`.
  package static let protocolMinor = 3

  /// How the broker listens and what it allows.
  package struct Configuration: Sendable {
    /// The location socket's path (NDJSON), or `nil` for none.
    package var path: String?
    /// The NMEA socket's path (NMEA 0183 sentences per fix), or `nil` for none.
    package var nmeaPath: String?
    /// A loopback TCP port for the same NMEA stream (host in 127.0.0.0/8), or `nil` for none.
    package var nmeaTCP: (host: String, port: UInt16)?
    /// The socket file's mode (0666: anyone may connect; grants decide).
    package var mode: mode_t = 0o666
    /// Connections beyond this are closed at accept.
    package var maximumClients = 1024
    /// Connections one uid may hold (root's are not counted); more are closed at accept.
    package var maximumClientsPerUser = 64
    /// Unsent bytes a client may have pending before it is disconnected.
    package var sendBufferBytes = 65536
    /// Bytes read from one client per round of the loop.
    package var readBudgetBytes = 65536
    /// Lines a connection may send per second, on average (blank ones count).
    package var linesPerSecond: Double = 200
    /// Lines a connection may send at once.
    package var lineBurst: Double = 400
    /// Seconds a request waits for an agent's answer before it is answered `denied`.
    package var agentTimeoutSeconds: Double = 30
    /// The clocks the broker's threads read: deadlines and rate budgets on its monotonic time,
    /// the grants an agent records dated by its wall clock.
    package var time = TimeSource.system
    /// The programs that may be agents (`agents` in waymark.conf).
    package var agents = AgentRule.installedWaymark()
    /// The group whose members' agents make lasting grants without asking the authority.
    package var deciderGroup = "waymark"
    /// Requests one uid may have waiting for an agent.
    package var maximumQuestionsPerUser = 8
    /// Grants the agents may record for the programs of one user (root's not counted); beyond
    /// it an answer counts once.
    package var maximumAgentGrantsPerUser = 64
    /// Connect, refuse and disconnect log lines per uid per minute; the rest are summed up.
    package var logLinesPerUserPerMinute = 20
    /// Seconds between checks for changed grants (changes reach clients within this).
    package var grantRefreshSeconds: Double = 0.5
    /// Directories whose changes may change the grants or the location-services switch (the
    /// store's, `/etc/waymark`): watched with inotify, the grants are checked only after a
    /// change. Empty (or one cannot be watched): checked every `grantRefreshSeconds` while
    /// clients are connected.
    package var watchedDirectories: [String] = []
    /// Called on the broker's thread (outside its lock) after the grants or the location-services
    /// switch changed: the daemon re-checks its own grant then, instead of on a timer. It must
    /// return at once.
    package var onGrantsChanged: (@Sendable () -> Void)?
    /// What reduced accuracy means (grid, minimum interval).
    package var reducedAccuracy = ReducedAccuracy.standard
    /// The release announced in `VERSION`.
    package var release = WaymarkRelease.version

    /// A configuration listening on `path` (the location socket) and `nmeaPath`.
    package init(path: String?, nmeaPath: String? = nil) {
      self.path = path
      self.nmeaPath = nmeaPath
    }
  }

  /// The configuration.
  package let configuration: Configuration
  let grantStore: any GrantStore
  let servicesSwitch: LocationServicesSwitch
  let decisionAuthority: any DecisionAuthority
  /// Where the monitors held for apps are kept (`MONITOR`), or `nil` when none are.
  let heldMonitors: (any HeldMonitorKeeper)?
  private let log: @Sendable (LogPriority, String) -> Void
  /// The loop's inbox. No sender ever waits (the daemon's main loop and gpsd's reader never
  /// wait for a client), so when ``inboxCapacity`` items wait the oldest *fix* goes: a newer fix
  /// is behind it and a watcher wants the latest position. Every other item is said once (an
  /// event, a visit, a verdict, held monitors' events) or holds a descriptor (an
  /// identification): never dropped, queued over the capacity; what sends them bounds them (the
  /// pipeline's events per fix, the identifier's ``TCPIdentifier/Limits/maximumPending``).
  private let inbox = Channel<Item>(
    capacity: BrokerServer.inboxCapacity,
    droppingOldestWhere: { item in
      if case .fix = item { true } else { false }
    })
  private let warnedInboxFull = Atomic<Bool>(false)
  /// Whether a client watches fixes (as the broker's thread last saw it) and the newest fix
  /// published while none did: that fix waits here, replaced by the next, and the broker's
  /// thread is not woken for it (a daemon with no watcher pays no wake-up per fix).
  private let parking = Locked(Parking())
  private let watching = Atomic<Bool>(false)
  let listeners: [Listener]
  /// Identifies `nmea-tcp` peers off the broker's thread, when that listener is open.
  let tcpIdentifier: TCPIdentifier?
  /// This server while its loop runs: where the identifier's answers go (cleared at the end,
  /// which breaks the cycle through the identifier's closure).
  private let tcpAnswers = Locked<BrokerServer?>(nil)
  let wakeDescriptor: Int32
  private let wakeWrite: Int32
  private let finished = Locked(false)
  /// The loop while the caller drives it (cleared when it ends: the loop holds the server).
  private let driven = Locked<BrokerLoop?>(nil)

  enum Item {
    case fix(Fix)
    case event(PlaceEvent)
    /// A stay opened or closed, and the declared place it lies in.
    case visit(Stay, PlaceSnapshot?)
    /// The authority's verdict on a lasting answer to question `id`.
    case decision(id: Int, allowed: Bool)
    /// Events of held monitors, just stored.
    case held([HeldMonitor.Event])
    /// A TCP peer identified (or not) by the ``TCPIdentifier``.
    case identified(Int32, Result<PeerIdentity, PeerIdentity.Failure>)
  }

  /// Items the inbox may hold before the oldest fixes are dropped (events are never dropped;
  /// the loop is far faster than 10 Hz: this only bounds memory if it ever stalls).
  private static let inboxCapacity = 4096

  /// Binds and listens on `configuration.path` and `configuration.nmeaPath` (a stale socket
  /// file there is replaced) and starts the broker's thread.
  ///
  /// - Parameters:
  ///   - configuration: where to listen and the limits.
  ///   - grants: the daemon's grant store (re-read when it changed; agents' answers are
  ///     written to it).
  ///   - services: the system-wide switch.
  ///   - decisionAuthority: asked (on a thread of its own) whether a lasting answer of an agent
  ///     that is neither root nor in group `waymark` may persist.
  ///   - heldMonitors: where the monitors held for apps are kept (`MONITOR`, protocol 1.3);
  ///     `nil`: a `MONITOR` request gets an `ERROR`.
  ///   - log: where the broker's log lines go.
  /// - Throws: ``BrokerError`` when the socket cannot be created.
  package convenience init(
    configuration: Configuration, grants: any GrantStore,
    services: LocationServicesSwitch = .file(),
    decisionAuthority: any DecisionAuthority = NoDecisionAuthority(),
    heldMonitors: (any HeldMonitorKeeper)? = nil,
    log: @escaping @Sendable (LogPriority, String) -> Void
  ) throws(BrokerError) {
    try self.init(
      configuration: configuration, grants: grants, services: services,
      decisionAuthority: decisionAuthority, heldMonitors: heldMonitors, log: log, runsLoop: true)
  }

  /// The server, its loop run by the caller when `runsLoop` is `false`: the broker invariant
  /// fuzzer drives ``loop`` round by round, deterministically, from its one thread, which is
  /// then the only one that touches the clients.
  init(
    configuration: Configuration, grants: any GrantStore, services: LocationServicesSwitch,
    decisionAuthority: any DecisionAuthority, heldMonitors: (any HeldMonitorKeeper)?,
    log: @escaping @Sendable (LogPriority, String) -> Void, runsLoop: Bool
  ) throws(BrokerError) {
    self.configuration = configuration
    self.grantStore = grants
    self.heldMonitors = heldMonitors
    self.servicesSwitch = services
    self.decisionAuthority = decisionAuthority
    self.log = log
    let listeners = try Listener.open(configuration)
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else {
      for listener in listeners { close(listener.descriptor) }
      throw BrokerError("cannot create a pipe: \(String(cString: strerror(errno)))")
    }
    for end in pipeEnds {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    self.listeners = listeners
    let answers = tcpAnswers
    tcpIdentifier =
      listeners.contains(where: \.isTCP)
      ? TCPIdentifier(time: configuration.time) { descriptor, result in
        guard let server = answers.withLock({ $0 }), server.enqueueIdentified(descriptor, result)
        else {
          close(descriptor)
          return
        }
      } : nil
    wakeDescriptor = pipeEnds[0]
    wakeWrite = pipeEnds[1]
    let loop = BrokerLoop(server: self)
    watching.store(loop.changeWatch != nil, ordering: .relaxed)
    if tcpIdentifier != nil { tcpAnswers.withLock { $0 = self } }
    if runsLoop {
      // From here on only this thread touches the loop and its clients.
      DetachedThread.start(name: "waymark-broker") { loop.run() }
    } else {
      driven.withLock { $0 = loop }
    }
  }

  /// The loop the caller drives (`runsLoop: false`), for the invariant fuzzer; `nil` when the
  /// broker's thread runs it, and once it ended.
  var loop: BrokerLoop? { driven.withLock { $0 } }

  deinit {
    close(wakeWrite)
  }

  /// Whether changes of the grants are seen as events (inotify on ``Configuration/watchedDirectories``)
  /// and reported to ``Configuration/onGrantsChanged``; when `false`, nothing is reported.
  package var watchesGrantChanges: Bool { watching.load(ordering: .relaxed) }

  /// Hands a fix to the broker's clients: appended to the inbox, behind what is already there,
  /// and the broker's thread woken; returns at once (the caller never waits for the broker, nor
  /// sends to a client itself). While no client watches fixes, the fix is only kept, replacing
  /// the one kept before, for the broker's next round (`STATUS`, `POLL`), without a wake-up.
  package func publish(_ fix: Fix) {
    let outcome = parking.withLock { parking -> Channel<Item>.SendOutcome? in
      guard parking.hasWatchers else {
        parking.fix = fix
        return nil
      }
      return inbox.send(.fix(fix))
    }
    if let outcome { sent(outcome) }
  }

  /// Hands a place event to the broker; returns at once.
  package func publish(_ event: PlaceEvent) { enqueue(.event(event)) }

  /// Hands a stay to the broker when it opens (departure `nil`) or closes; returns at once.
  ///
  /// - Parameter place: the declared place the stay lies in (its name goes in the `VISIT`).
  package func publish(_ stay: Stay, place: PlaceSnapshot?) { enqueue(.visit(stay, place)) }

  /// Hands events of held monitors, already stored, to the apps reading them; returns at once.
  package func publish(held events: [HeldMonitor.Event]) {
    guard !events.isEmpty else { return }
    enqueue(.held(events))
  }

  /// Closes every connection and the socket, removes the socket file, and ends the thread.
  /// Returns when that is done.
  package func stop() {
    inbox.close()
    wake()
    finished.withLock(waitingUntil: { $0 }, timeoutMilliseconds: 5000, { _ in })
  }

  /// Appends `item` to the inbox and wakes the loop (the oldest fix goes when it is full).
  func enqueue(_ item: Item) { sent(inbox.send(item)) }

  /// After a send into the inbox: the warning when it was full, and the loop woken.
  private func sent(_ outcome: Channel<Item>.SendOutcome) {
    if case .sentDroppingOldest = outcome, !warnedInboxFull.exchange(true, ordering: .relaxed) {
      log(.warning, "broker inbox full: dropping the oldest fixes")
    }
    wake()
  }

  /// Queues a TCP peer's identification for the loop; `false` when the broker stops (the
  /// caller closes the connection).
  func enqueueIdentified(_ descriptor: Int32, _ result: Result<PeerIdentity, PeerIdentity.Failure>)
    -> Bool
  {
    guard inbox.send(.identified(descriptor, result)).isSent else { return false }
    wake()
    return true
  }

  /// Wakes the loop out of poll(2).
  func wake() {
    var byte: UInt8 = 1
    _ = Glibc.write(wakeWrite, &byte, 1)
  }

  // MARK: - For the loop

  func write(_ severity: LogPriority, _ message: String) { log(severity, message) }

  /// What waits in the inbox, and whether the broker stops.
  func takeInbox() -> (items: [Item], stopping: Bool) {
    // Closed is read first: once closed nothing more is queued, so every item sent before the
    // close is in this take; a close just after the read leaves its items to the next round.
    let stopping = inbox.isClosed
    let items = parking.withLock { parking in
      // A fix is kept only while nobody watches, so it is newer than the inbox's fixes (sent
      // before the last watcher left): it goes after them.
      var items = inbox.receiveAll()
      if let fix = parking.fix.take() { items.append(.fix(fix)) }
      return items
    }
    return (items, stopping)
  }

  /// Whether a client watches fixes, told by the loop after each round. When one starts to,
  /// the kept fix goes into the inbox first, so it stays ahead of the fixes published next.
  func setHasWatchers(_ hasWatchers: Bool) {
    let queued = parking.withLock { parking -> Bool in
      guard parking.hasWatchers != hasWatchers else { return false }
      parking.hasWatchers = hasWatchers
      guard hasWatchers, let fix = parking.fix.take() else { return false }
      return inbox.send(.fix(fix)).isSent
    }
    if queued { wake() }
  }

  /// What `publish(_:)` of a fix reads and keeps, under one lock with the inbox's sends.
  private struct Parking {
    var hasWatchers = false
    var fix: Fix?
  }

  func loopEnded() {
    tcpIdentifier?.stop()
    tcpAnswers.withLock { $0 = nil }
    driven.withLock { $0 = nil }
    for listener in listeners { close(listener.descriptor) }
    close(wakeDescriptor)
    for path in [configuration.path, configuration.nmeaPath] {
      if let path { unlink(path) }
    }
    finished.withLock { $0 = true }
    finished.signal()
  }
}
