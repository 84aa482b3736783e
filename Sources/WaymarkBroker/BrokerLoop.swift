import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore
import WaymarkIdentify

/// The broker's thread: poll(2) over the wake pipe, the listeners and every client. Its
/// concerns are cut into extensions: connections (accept, read, close) here, output and fan-out
/// (`BrokerLoop+Output`), the protocol's requests (`BrokerLoop+Requests`), the agents' questions
/// (`BrokerLoop+Agents`, deciding through ``AgentQuestions``) and the grants
/// (`BrokerLoop+Grants`).
///
/// Each client is owned by this one thread: no other thread reads, writes or closes a client's
/// socket or touches its session; fixes and events reach it through the server's inbox.
final class BrokerLoop: @unchecked Sendable {
  // @unchecked: made by the server, then handed to the broker's thread, the only one that
  // touches it (`run`).
  let server: BrokerServer
  let configuration: BrokerServer.Configuration
  var clients: [Int32: BrokerClient] = [:]
  /// Connections per uid (root's not counted).
  var connectionsPerUser: [uid_t: Int] = [:]
  /// Connections refused at the `socket-clients` limit.
  var refusedAtLimit = RefusalCount()
  /// TCP peers waiting for the ``TCPIdentifier``, with their addresses; those refused over its
  /// limits.
  var pendingTCP: [Int32: [UInt8]] = [:]
  var refusedWaiting = RefusalCount()
  /// Connect, refuse and disconnect lines, per uid.
  var logThrottle: LogThrottle
  var questions: AgentQuestions
  var latestFix: (fix: Fix, location: Location)?
  /// Reduced positions released, per client id (across connections).
  var reducedReleases: [String: ReducedRelease] = [:]
  var grants: [String: Grant] = [:]
  var grantsReadable = true
  /// The store's change mark at the last read of the grants (`nil`: read every time).
  var grantsMark: Int64?
  /// The newest revocation seen.
  var revocationMark: Int64?
  var servicesEnabled = true
  /// The broker's time (``BrokerServer/Configuration/time``): deadlines, budgets, grant times.
  let clock: TimeSource
  var nextRefresh: ContinuousClock.Instant
  let version: [UInt8]
  let listeners: [Listener]
  /// The deciders' group (`waymark`), when it exists.
  let deciderGroup: gid_t?
  /// Changes of the store and the switch, when they can be watched (else a timer).
  let changeWatch: ChangeWatch?
  /// A change was seen and its check waits for `nextRefresh`.
  var changePending = false
  /// The watch rests until `nextRefresh`: not polled after a check that a change caused, nor
  /// while a check is pending, so that a burst of writes (the daemon's own: a transaction
  /// modifies the WAL several times, and every commit does) wakes the broker once, then once
  /// more when the check is due, instead of at every modification. What the watch queued while
  /// it rested is read when the rest ends, and checked at once.
  var watchResting = false
  /// Changes of held monitors per uid (a budget, as lines per connection).
  var monitorChanges: [uid_t: LineRate] = [:]
  /// The client ids last told to the held-monitor keeper as authorized.
  var heldAuthorized: Set<String>?
  /// The grants or the switch changed since ``Configuration/onGrantsChanged`` was last called.
  var grantsChanged = false
  /// Whether the ``DecisionAuthority`` is asked on the broker's thread (the invariant fuzzer,
  /// whose authority answers at once) rather than on a thread of its own (polkit blocks).
  var asksAuthorityInline = false

  init(server: BrokerServer) {
    self.server = server
    configuration = server.configuration
    clock = server.configuration.time
    nextRefresh = clock.now
    listeners = server.listeners
    questions = AgentQuestions(maximumPerUser: configuration.maximumQuestionsPerUser)
    logThrottle = LogThrottle(
      limit: configuration.logLinesPerUserPerMinute, window: .seconds(60))
    deciderGroup = PeerCredentials.groupID(configuration.deciderGroup)
    changeWatch = ChangeWatch(directories: configuration.watchedDirectories)
    version =
      DaemonMessage.version(
        DaemonMessage.Version(
          release: configuration.release, protocolMajor: DaemonMessage.protocolMajor,
          protocolMinor: BrokerServer.protocolMinor)
      ).line
  }

  /// The broker's thread: rounds between polls until the server stops.
  func run() {
    refreshGrants(force: true)
    var entries: [pollfd] = []
    while true {
      let (timeout, notify) = pollSet(into: &entries)
      if notify { configuration.onGrantsChanged?() }
      let ready = poll(&entries, nfds_t(entries.count), timeout)
      let failure = ready < 0 && errno != EINTR ? errno : 0
      if round(entries, pollFailure: failure) { break }
    }
    for client in clients.values { close(client.descriptor) }
    clients.removeAll()
    server.loopEnded()
  }

  /// The descriptors to poll (the wake pipe, the listeners, every client, the change watch),
  /// the timeout, and whether `onGrantsChanged` is due.
  private func pollSet(into entries: inout [pollfd]) -> (timeout: Int32, notify: Bool) {
    entries.removeAll(keepingCapacity: true)
    entries.append(pollfd(fd: server.wakeDescriptor, events: Int16(POLLIN), revents: 0))
    for listener in listeners {
      entries.append(pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0))
    }
    for client in clients.values {
      var events = Int16(POLLIN)
      if client.pendingBytes > 0 { events |= Int16(POLLOUT) }
      entries.append(pollfd(fd: client.descriptor, events: events, revents: 0))
    }
    if let changeWatch, !changePending, !watchResting {
      entries.append(pollfd(fd: changeWatch.descriptor, events: Int16(POLLIN), revents: 0))
    }
    defer { grantsChanged = false }
    return (timeoutMilliseconds(), grantsChanged)
  }

  /// One round after a poll(2) that returned `entries` (or failed with `pollFailure`): wake
  /// pipe, store changes, inbox, clients, listeners, timers.
  ///
  /// - Returns: whether the broker is stopping.
  func round(_ entries: [pollfd], pollFailure: Int32) -> Bool {
    if pollFailure != 0 {
      server.write(.warning, "broker: poll failed: \(String(cString: strerror(pollFailure)))")
      usleep(10_000)
    }
    if entries[0].revents != 0 { drainWakePipe() }
    if let changeWatch, let last = entries.last, last.fd == changeWatch.descriptor,
      last.revents != 0
    {
      changeWatch.drain()
      changePending = true
    }
    let (items, stopping) = server.takeInbox()
    for item in items { deliver(item) }
    if stopping { return true }
    for entry in entries.dropFirst(1 + listeners.count) where entry.revents != 0 {
      guard let client = clients[entry.fd] else { continue }
      if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readFrom(client) }
      if !client.isClosing, entry.revents & Int16(POLLOUT) != 0 { flush(client) }
    }
    // Peers that hung up leave before new ones are counted against socket-clients (the load
    // stage's churn was refused at the limit by clients already gone).
    closeFinishedClients()
    for (index, listener) in listeners.enumerated() where entries[1 + index].revents != 0 {
      acceptClients(listener)
    }
    let now = clock.now
    if now >= nextRefresh { refreshIfChanged() }
    expireQuestions(now: now)
    for summary in logThrottle.summaries(at: now) {
      server.write(
        .notice,
        "… and \(summary.count) more connection line(s) from uid \(summary.uid) "
          + "in the last minute")
    }
    closeFinishedClients()
    server.setHasWatchers(clients.values.contains { $0.session.watch != nil })
    return false
  }

  /// Until the next thing due: a grant check after a change of the store (or, when it cannot
  /// be watched, while clients are connected: a revocation must reach them), a question's
  /// deadline, a log summary. With nothing due, poll(2) waits for an event alone.
  private func timeoutMilliseconds() -> Int32 {
    var deadlines: [ContinuousClock.Instant] = []
    if changePending || watchResting || (changeWatch == nil && !clients.isEmpty) {
      deadlines.append(nextRefresh)
    }
    if let deadline = questions.nextDeadline { deadlines.append(deadline) }
    if let summary = logThrottle.nextSummary { deadlines.append(summary) }
    guard let deadline = deadlines.min() else { return -1 }
    let remaining = clock.now.duration(to: deadline)
    let milliseconds =
      remaining.components.seconds * 1000
      + remaining.components.attoseconds / 1_000_000_000_000_000
    return Int32(max(0, min(milliseconds + 1, 60_000)))
  }

  private func drainWakePipe() {
    var buffer = [UInt8](repeating: 0, count: 256)
    while read(server.wakeDescriptor, &buffer, buffer.count) > 0 {}
  }

  /// Logs `message` about a peer of `uid` unless that uid has used its lines for this minute.
  func writeThrottled(_ severity: LogPriority, uid: uid_t, _ message: String) {
    guard logThrottle.admit(uid: uid, at: clock.now) else { return }
    server.write(severity, message)
  }

  // MARK: Connections

  private func acceptClients(_ listener: Listener) {
    let kind = listener.kind
    while true {
      let descriptor = listener.accept()
      guard descriptor >= 0 else { return }
      // Over the limit: closed before any /proc read, and logged at most once a second (a
      // connect storm at the limit would otherwise cost a warning and an identification each).
      guard clients.count + pendingTCP.count < configuration.maximumClients else {
        close(descriptor)
        if let count = refusedAtLimit.refused(at: clock.now) {
          server.write(
            .warning,
            "refused \(count) connection(s): \(configuration.maximumClients) clients already "
              + "connected")
        }
        continue
      }
      var bufferSize = Int32(configuration.sendBufferBytes)
      _ = setsockopt(
        descriptor, SOL_SOCKET, SO_SNDBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
      if listener.isTCP {
        identifyLater(descriptor)
        continue
      }
      let credentials = PeerCredentials.of(socket: descriptor)
      if let credentials, !admits(uid: credentials.uid) {
        close(descriptor)
        continue
      }
      let identity: PeerIdentity
      do {
        identity = try PeerIdentity.of(socket: descriptor)
      } catch {
        writeThrottled(
          .warning, uid: credentials?.uid ?? 0,
          "refused a connection: cannot identify the peer: \(LogText.escaped("\(error)"))")
        close(descriptor)
        continue
      }
      if credentials == nil, !admits(uid: identity.uid) {
        close(descriptor)
        continue
      }
      let mayPersist =
        identity.uid == 0
        || (deciderGroup.map { credentials?.isMember(of: $0) ?? false } ?? false)
      adopt(descriptor, kind: kind, identity: identity, mayPersist: mayPersist)
    }
  }

  /// A loopback TCP peer (`nmea-tcp`) goes to the ``TCPIdentifier``'s thread, within the
  /// limits of connections waiting there, per peer address and in all; over them it is closed
  /// at once, before any `/proc` read.
  private func identifyLater(_ descriptor: Int32) {
    let address = SocketAddress(descriptor, peer: true)?.address ?? []
    guard let identifier = server.tcpIdentifier,
      pendingTCP.count < identifier.limits.maximumPending,
      pendingTCP.values.filter({ $0 == address }).count
        < identifier.limits.maximumPendingPerAddress
    else {
      close(descriptor)
      if let count = refusedWaiting.refused(at: clock.now) {
        server.write(
          .warning,
          "refused \(count) NMEA TCP connection(s): too many waiting to be identified")
      }
      return
    }
    pendingTCP[descriptor] = address
    guard identifier.submit(descriptor) else {
      pendingTCP[descriptor] = nil
      close(descriptor)
      return
    }
  }

  /// What the ``TCPIdentifier`` found about a TCP peer: a client of the NMEA socket, under the
  /// per-user quota and the grants, or closed.
  func identified(_ descriptor: Int32, _ result: Result<PeerIdentity, PeerIdentity.Failure>) {
    pendingTCP[descriptor] = nil
    switch result {
    case .failure(let error):
      writeThrottled(
        .warning, uid: 0,
        "refused an NMEA TCP connection: cannot identify the peer: "
          + LogText.escaped("\(error)"))
      close(descriptor)
    case .success(let identity):
      guard admits(uid: identity.uid) else {
        close(descriptor)
        return
      }
      // No credentials for a TCP peer: only root's answers could persist, and an NMEA peer
      // answers nothing.
      adopt(descriptor, kind: .nmea, identity: identity, mayPersist: identity.uid == 0)
    }
  }

  /// Makes the identified peer on `descriptor` a client: its grant read now, an NMEA peer
  /// without a position to receive closed at once, a location-socket peer greeted with
  /// `VERSION` and its `AUTHORIZATION`.
  func adopt(_ descriptor: Int32, kind: BrokerClientKind, identity: PeerIdentity, mayPersist: Bool)
  {
    let client = BrokerClient(
      descriptor: descriptor, kind: kind, identity: identity, mayPersist: mayPersist,
      lineRate: LineRate(perSecond: configuration.linesPerSecond, burst: configuration.lineBurst))
    // A new peer sees the grant and the switch as they are now, not as of the last refresh
    // (with no client connected, there is none).
    servicesEnabled = server.servicesSwitch.isEnabled
    do {
      grants[identity.clientID] = try server.grantStore.grant(for: identity.clientID)
    } catch {
      grantsReadable = false
    }
    update(&client.session)
    let state = client.session.effective
    if kind == .nmea {
      guard client.session.disclosure(of: .position) != .withheld else {
        writeThrottled(
          .notice, uid: identity.uid,
          "refused \(client.logName): \(state.status.rawValue)")
        close(descriptor)
        return
      }
      client.session.watch = DaemonRequest.Watch()
    }
    clients[descriptor] = client
    if identity.uid != 0 { connectionsPerUser[identity.uid, default: 0] += 1 }
    writeThrottled(
      .info, uid: identity.uid,
      "\(client.logName) connected: \(state.status.rawValue)"
        + (state.status.isAuthorized ? ", \(state.accuracy.rawValue)" : ""))
    guard kind == .broker else {
      client.session.announced = state
      return
    }
    send(version, to: client)
    if let change = client.session.authorizationChange() { announce(change, to: client) }
  }

  /// Whether a connection of `uid` fits its quota (root has none); logs the refusal if not.
  private func admits(uid: uid_t) -> Bool {
    guard uid != 0, connectionsPerUser[uid, default: 0] >= configuration.maximumClientsPerUser
    else { return true }
    writeThrottled(
      .warning, uid: uid,
      "refused a connection of uid \(uid): \(configuration.maximumClientsPerUser) "
        + "connections of that user already (socket-clients-per-user)")
    return false
  }

  /// Reads what `client` sent, at most `readBudgetBytes` per round (poll(2) comes back for the
  /// rest), and handles its complete lines; a client over its line rate is cut off.
  private func readFrom(_ client: BrokerClient) {
    var buffer = [UInt8](repeating: 0, count: configuration.readBudgetBytes)
    var count = 0
    repeat {
      count = read(client.descriptor, &buffer, buffer.count)
    } while count < 0 && errno == EINTR
    if count == 0 {
      client.isClosing = true
      return
    }
    if count < 0 {
      if errno != EAGAIN && errno != EWOULDBLOCK { client.isClosing = true }
      return
    }
    if client.kind == .nmea { return }  // NMEA peers only read; what they send is dropped
    let lines = buffer[..<count].reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
    guard client.lineRate.take(lines, at: clock.now) else {
      fail(
        client, "too many lines: over \(Int(configuration.linesPerSecond)) a second", close: true)
      writeThrottled(
        .notice, uid: client.session.identity.uid,
        "\(client.logName) sent too many lines (over \(Int(configuration.linesPerSecond)) "
          + "a second); cut off")
      return
    }
    client.input.append(contentsOf: buffer[..<count])
    var start = 0
    while let newline = client.input[start...].firstIndex(of: 0x0A) {
      var line = client.input[start..<newline]
      if line.last == 0x0D { line = line.dropLast() }
      start = newline + 1
      if line.count > DaemonRequest.maximumLineLength {
        fail(client, "line longer than \(DaemonRequest.maximumLineLength) bytes", close: true)
        return
      }
      if !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { handle(line, from: client) }
      if client.isClosing { return }
    }
    client.input.removeFirst(start)
    if client.input.count > DaemonRequest.maximumLineLength {
      fail(client, "line longer than \(DaemonRequest.maximumLineLength) bytes", close: true)
    }
  }

  func closeFinishedClients() {
    let finished = clients.values.filter(\.isClosing)
    guard !finished.isEmpty else { return }
    for client in finished {
      // Best effort: what is already queued (an ERROR, say) goes out if the socket takes it.
      if client.pendingBytes > 0 { flush(client, closing: true) }
      close(client.descriptor)
      clients[client.descriptor] = nil
      let uid = client.session.identity.uid
      if uid != 0 {
        connectionsPerUser[uid, default: 1] -= 1
        if connectionsPerUser[uid] == 0 { connectionsPerUser[uid] = nil }
      }
      questions.drop(connection: client.descriptor)
      writeThrottled(.info, uid: uid, "\(client.logName) disconnected")
    }
  }
}
