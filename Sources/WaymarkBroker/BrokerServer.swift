// Trust boundary of waymarkd's location socket.
//
// Who may connect: anyone who can reach the socket file (mode 0666 in a 0755 runtime
// directory): connecting proves nothing, grants decide.
// How the peer is identified: at accept, from the kernel (SO_PEERCRED uid and pid, the real path
// of /proc/<pid>/exe read through a pidfd, by waymark-identify for other users' peers, guarded
// against pid reuse: see PeerIdentity). A peer that cannot be
// identified is closed at once and logged. The identity `<user>:<exe>` is the client id of its
// grant in the daemon's store; clients cannot name themselves.
// What a peer without a grant gets: VERSION and AUTHORIZATION (notDetermined or denied), ERROR
// answers, and the right to REQUEST (which asks an agent of the same user, or root's). Never a
// coordinate. A reduced grant gets coarse positions snapped here, never a precise one; a revoked
// client is told within `grantRefresh` (0.5 s) and sent no further TPV.
// The NMEA socket (`nmea-socket`, for GeoClue and other NMEA readers) has the same rules: a peer
// is identified at accept; one without a grant is closed at once (and logged); a reduced grant
// gets coarse positions; a peer whose grant goes is closed within `grantRefresh`. Its peers
// only read: what they send is discarded. The optional TCP form (`nmea-tcp`, for OpenCPN, QGIS
// and the like) listens on a loopback address only and identifies a peer through its row in
// /proc/<pid>/net/tcp or tcp6 and /proc/*/fd (PeerIdentity.ofLoopbackTCP, by waymark-identify
// under the unit); a peer it cannot identify is closed.
// Limits that protect the daemon: lines of at most 4,096 bytes (a longer one is an ERROR and a
// close, the framing being lost); at most `maximumClients` connections (more are closed at
// accept); a client whose unsent output passes `sendBufferBytes` is disconnected; one thread
// with poll(2) serves every client, never blocking on one; the daemon's main loop only appends
// to an inbox and never waits for a client; the task that reads gpsd sends a fix to the clients
// itself only when it takes the broker's lock without waiting and the last fan-out cost under
// 1 ms (non-blocking sends), else it appends to the inbox too.

import FoundationEssentials
import Glibc
import Synchronization
import Waymark
import WaymarkCore

/// The location broker: `waymarkd`'s Unix socket, serving fixes, place events and authorization
/// to other processes under the grants of the daemon's store (DESIGN §7).
///
/// One dedicated thread owns the listening socket and every client; ``publish(_:)`` hands fixes
/// and events to it through a bounded inbox and returns at once.
public final class BrokerServer: Sendable {
  /// How the broker listens and what it allows.
  public struct Configuration: Sendable {
    /// The location socket's path (NDJSON, DESIGN §7), or `nil` for none.
    public var path: String?
    /// The NMEA socket's path (NMEA 0183 sentences per fix, DESIGN §8), or `nil` for none.
    public var nmeaPath: String?
    /// A loopback TCP port for the same NMEA stream (host in 127.0.0.0/8), or `nil` for none.
    public var nmeaTCP: (host: String, port: UInt16)?
    /// The socket file's mode (0666: anyone may connect; grants decide).
    public var mode: mode_t = 0o666
    /// Connections beyond this are closed at accept.
    public var maximumClients = 1024
    /// Unsent bytes a client may have pending before it is disconnected.
    public var sendBufferBytes = 65536
    /// Seconds a request waits for an agent's answer before it is answered `denied`.
    public var agentTimeoutSeconds: Double = 30
    /// Seconds between re-reads of the grants (changes reach clients within this).
    public var grantRefreshSeconds: Double = 0.5
    /// What reduced accuracy means (grid, minimum interval).
    public var reducedAccuracy = ReducedAccuracy.standard
    /// The release announced in `VERSION`.
    public var release = "1.0"

    /// A configuration listening on `path` (the location socket) and `nmeaPath`.
    public init(path: String?, nmeaPath: String? = nil) {
      self.path = path
      self.nmeaPath = nmeaPath
    }
  }

  /// How important a log line is.
  public enum Severity: Sendable {
    case warning, notice, info, debug
  }

  /// The configuration.
  public let configuration: Configuration
  private let grants: any GrantStore
  private let services: LocationServicesSwitch
  private let log: @Sendable (Severity, String) -> Void
  private let inbox = Mutex(Inbox())
  private let connectedCount = Atomic<Int>(0)
  private let listeners: [Listener]
  private let wakeRead: Int32
  private let wakeWrite: Int32
  private let finished = Mutex<Bool>(false)
  /// The loop, for fixes delivered from the publishing thread (cleared when the loop ends).
  private let attached = Locked<BrokerLoop?>(nil)

  private struct Inbox {
    var items: [Item] = []
    var stopping = false
    var droppedFixes = 0
  }

  enum Item {
    case fix(Fix)
    case event(PlaceEvent)
  }

  /// Items the inbox may hold before the oldest fixes are dropped (the loop is far faster than
  /// 10 Hz; this only bounds memory if it ever stalls).
  private static let inboxCapacity = 4096

  /// Binds and listens on `configuration.path` and `configuration.nmeaPath` (a stale socket
  /// file there is replaced) and starts the broker's thread.
  ///
  /// - Parameters:
  ///   - configuration: where to listen and the limits.
  ///   - grants: the daemon's grant store (read every `grantRefreshSeconds`; agents' answers are
  ///     written to it).
  ///   - services: the system-wide switch.
  ///   - log: where the broker's log lines go.
  /// - Throws: ``BrokerError`` when the socket cannot be created.
  public init(
    configuration: Configuration, grants: any GrantStore,
    services: LocationServicesSwitch = .file(),
    log: @escaping @Sendable (Severity, String) -> Void
  ) throws(BrokerError) {
    self.configuration = configuration
    self.grants = grants
    self.services = services
    self.log = log
    var listeners: [Listener] = []
    func closeAll() {
      for listener in listeners { close(listener.descriptor) }
    }
    for (path, kind) in [
      (configuration.path, BrokerClientKind.broker), (configuration.nmeaPath, .nmea),
    ] {
      guard let path else { continue }
      do {
        listeners.append(
          Listener(descriptor: try Self.listen(path, mode: configuration.mode), kind: kind))
      } catch {
        closeAll()
        throw error
      }
    }
    if let endpoint = configuration.nmeaTCP {
      do {
        listeners.append(
          Listener(
            descriptor: try Self.listenTCP(host: endpoint.host, port: endpoint.port), kind: .nmea,
            isTCP: true))
      } catch {
        closeAll()
        throw error
      }
    }
    self.listeners = listeners
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else {
      closeAll()
      throw BrokerError("cannot create a pipe: \(String(cString: strerror(errno)))")
    }
    for end in pipeEnds {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    wakeRead = pipeEnds[0]
    wakeWrite = pipeEnds[1]
    let loop = BrokerLoop(server: self)
    attached.withLock { $0 = loop }
    DetachedThread.start(name: "waymark-broker") { loop.run() }
  }

  deinit {
    close(wakeWrite)
  }

  /// Connected clients now.
  public var clientCount: Int { connectedCount.load(ordering: .relaxed) }

  /// Hands a fix to the broker's clients.
  ///
  /// Delivered on the caller's thread when the broker's thread is not busy and the last fix's
  /// fan-out cost under 1 ms (one thread wake-up less between gpsd and a client): the sends are
  /// non-blocking, and a client that cannot take the bytes keeps them for the broker's thread to
  /// flush. Otherwise (the broker's thread accepting, reading or refreshing grants; so many
  /// clients that the fan-out would hold up the caller) the fix goes through the inbox, behind
  /// what is already there: the caller never waits for the broker.
  public func publish(_ fix: Fix) {
    guard let loop = attached.withLock({ $0 }), loop.deliverIfIdle(.fix(fix)) else {
      enqueue(.fix(fix))
      return
    }
  }

  /// Hands a place event to the broker; returns at once.
  public func publish(_ event: PlaceEvent) { enqueue(.event(event)) }

  /// Closes every connection and the socket, removes the socket file, and ends the thread.
  /// Returns when that is done.
  public func stop() {
    inbox.withLock { $0.stopping = true }
    wake()
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(5)
    while !finished.withLock({ $0 }) && clock.now < deadline { usleep(2000) }
  }

  private func enqueue(_ item: Item) {
    let dropped = inbox.withLock { inbox -> Bool in
      guard !inbox.stopping else { return false }
      var dropped = false
      if inbox.items.count >= Self.inboxCapacity,
        let index = inbox.items.firstIndex(where: { if case .fix = $0 { true } else { false } })
      {
        inbox.items.remove(at: index)
        inbox.droppedFixes += 1
        dropped = true
      }
      inbox.items.append(item)
      return dropped && inbox.droppedFixes == 1
    }
    if dropped { log(.warning, "broker inbox full: dropping the oldest fixes") }
    wake()
  }

  private func wake() {
    var byte: UInt8 = 1
    _ = Glibc.write(wakeWrite, &byte, 1)
  }

  private static func listen(_ path: String, mode: mode_t) throws(BrokerError) -> Int32 {
    var address = try sockaddr_un(path: path)
    var status = stat()
    if lstat(path, &status) == 0 {
      guard (status.st_mode & S_IFMT) == S_IFSOCK else {
        throw BrokerError("\(path) exists and is not a socket")
      }
      unlink(path)
    }
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else {
      throw BrokerError("cannot create a socket: \(String(cString: strerror(errno)))")
    }
    let length = socklen_t(MemoryLayout<sockaddr_un>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      throw BrokerError("cannot listen on \(path): \(reason)")
    }
    guard chmod(path, mode) == 0, Glibc.listen(descriptor, 128) == 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      unlink(path)
      throw BrokerError("cannot listen on \(path): \(reason)")
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    return descriptor
  }

  private static func listenTCP(host: String, port: UInt16) throws(BrokerError) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    guard inet_pton(AF_INET, host, &address.sin_addr) == 1,
      UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
    else {
      throw BrokerError("nmea-tcp must listen on a loopback address (127.x.x.x), not \(host)")
    }
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else {
      throw BrokerError("cannot create a TCP socket: \(String(cString: strerror(errno)))")
    }
    var yes: Int32 = 1
    _ = setsockopt(
      descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, Glibc.listen(descriptor, 128) == 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      throw BrokerError("cannot listen on \(host):\(port): \(reason)")
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    return descriptor
  }

  // MARK: - For the loop

  fileprivate var listenerDescriptors: [Listener] { listeners }
  fileprivate var wakeDescriptor: Int32 { wakeRead }
  fileprivate var grantStore: any GrantStore { grants }
  fileprivate var servicesSwitch: LocationServicesSwitch { services }

  fileprivate func write(_ severity: Severity, _ message: String) { log(severity, message) }

  fileprivate func wakeLoop() { wake() }

  fileprivate func takeInbox() -> (items: [Item], stopping: Bool) {
    inbox.withLock { inbox in
      defer { inbox.items.removeAll(keepingCapacity: true) }
      return (inbox.items, inbox.stopping)
    }
  }

  fileprivate func setClientCount(_ count: Int) {
    connectedCount.store(count, ordering: .relaxed)
  }

  fileprivate func loopEnded() {
    attached.withLock { $0 = nil }
    for listener in listeners { close(listener.descriptor) }
    close(wakeRead)
    for path in [configuration.path, configuration.nmeaPath] {
      if let path { unlink(path) }
    }
    finished.withLock { $0 = true }
  }
}

/// The socket could not be set up.
public struct BrokerError: Error, Sendable, CustomStringConvertible {
  /// What went wrong.
  public var description: String

  init(_ description: String) { self.description = description }
}

/// A listening socket of the broker.
struct Listener {
  var descriptor: Int32
  var kind: BrokerClientKind
  /// A loopback TCP socket (peers identified through /proc/net/tcp) rather than a Unix one.
  var isTCP = false
}

/// Which socket a client came through.
enum BrokerClientKind {
  /// The location socket: NDJSON both ways.
  case broker
  /// The NMEA socket: sentences out, nothing in.
  case nmea
}

/// One connection, owned by the broker's thread.
private final class BrokerClient {
  let descriptor: Int32
  let kind: BrokerClientKind
  var session: BrokerSession
  var input: [UInt8] = []
  var output: [UInt8] = []
  var outputOffset = 0
  var isClosing = false

  init(descriptor: Int32, kind: BrokerClientKind, identity: PeerIdentity) {
    self.descriptor = descriptor
    self.kind = kind
    session = BrokerSession(identity: identity)
  }

  var pendingBytes: Int { output.count - outputOffset }
}

/// A question put to an agent on behalf of a client.
private struct Question {
  var client: Int32
  var level: GrantLevel
  var deadline: ContinuousClock.Instant
}

/// The broker's thread: poll(2) over the wake pipe, the listener and every client.
private final class BrokerLoop: @unchecked Sendable {
  // @unchecked: every member is used with `lock` held: by the broker's thread for each round
  // between two polls, or by a publishing thread in `deliverIfIdle` (which only tries it).
  private let lock = PthreadLock()
  private let server: BrokerServer
  private let configuration: BrokerServer.Configuration
  private var clients: [Int32: BrokerClient] = [:]
  /// Connections refused at the `socket-clients` limit since the last warning, and when that was.
  private var refusedSinceLog = 0
  private var lastRefusalLog: ContinuousClock.Instant?
  private var questions: [Int: Question] = [:]
  private var nextQuestion = 1
  private var latestFix: (fix: Fix, location: Location)?
  private var grants: [String: Grant] = [:]
  private var grantsReadable = true
  private var servicesEnabled = true
  private let clock = ContinuousClock()
  private var nextRefresh: ContinuousClock.Instant
  private let version: [UInt8]
  private let listeners: [Listener]

  init(server: BrokerServer) {
    self.server = server
    configuration = server.configuration
    nextRefresh = clock.now
    listeners = server.listenerDescriptors
    var line = JSONLine(class: "VERSION")
    line.add("release", configuration.release)
    line.add("proto_major", 1)
    line.add("proto_minor", 0)
    version = line.closed + [0x0A]
  }

  /// What the last fix's fan-out cost, whichever thread did it.
  private var fanOutCost = Duration.zero
  /// The most a fan-out may cost to be done on the publishing thread: 1 ms, a tenth of an
  /// epoch at 10 Hz.
  private static let directBudget = Duration.milliseconds(1)

  /// Delivers `item` on the calling thread, after what waits in the inbox, if the broker's
  /// thread is not in a round and the last fan-out was cheap.
  ///
  /// - Returns: `false` when the lock was busy or the fan-out too costly (nothing was done).
  func deliverIfIdle(_ item: BrokerServer.Item) -> Bool {
    guard lock.tryLock() else { return false }
    // A fan-out that costs more than the budget (many clients, a slow machine) would hold up
    // the reading of the source: the broker's thread takes it instead.
    guard fanOutCost <= Self.directBudget else {
      lock.unlock()
      return false
    }
    let (items, stopping) = server.takeInbox()
    for waiting in items { deliver(waiting) }
    if !stopping { deliver(item) }
    // Output left pending, or a client to close: the broker's thread has to look.
    let needsLoop =
      stopping || clients.values.contains { $0.pendingBytes > 0 || $0.isClosing }
    lock.unlock()
    if needsLoop { server.wakeLoop() }
    return true
  }

  func run() {
    lock.lock()
    refreshGrants()
    var entries: [pollfd] = []
    while true {
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
      let timeout = timeoutMilliseconds()
      lock.unlock()
      let ready = poll(&entries, nfds_t(entries.count), timeout)
      lock.lock()
      if ready < 0 && errno != EINTR {
        server.write(.warning, "broker: poll failed: \(String(cString: strerror(errno)))")
        usleep(10_000)
      }
      if entries[0].revents != 0 { drainWakePipe() }
      let (items, stopping) = server.takeInbox()
      for item in items { deliver(item) }
      if stopping { break }
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
      if now >= nextRefresh { refreshGrants() }
      expireQuestions(now: now)
      closeFinishedClients()
    }
    for client in clients.values { close(client.descriptor) }
    clients.removeAll()
    lock.unlock()
    server.setClientCount(0)
    server.loopEnded()
  }

  private func timeoutMilliseconds() -> Int32 {
    var deadline = nextRefresh
    for question in questions.values where question.deadline < deadline {
      deadline = question.deadline
    }
    let remaining = clock.now.duration(to: deadline)
    let milliseconds =
      remaining.components.seconds * 1000
      + remaining.components.attoseconds / 1_000_000_000_000_000
    return Int32(max(0, min(milliseconds + 1, 1000)))
  }

  private func drainWakePipe() {
    var buffer = [UInt8](repeating: 0, count: 256)
    while read(server.wakeDescriptor, &buffer, buffer.count) > 0 {}
  }

  // MARK: Connections

  private func acceptClients(_ listener: Listener) {
    let kind = listener.kind
    while true {
      let descriptor = accept(listener.descriptor, nil, nil)
      guard descriptor >= 0 else { return }
      // Over the limit: closed before any /proc read, and logged at most once a second (a
      // connect storm at the limit would otherwise cost a warning and an identification each).
      guard clients.count < configuration.maximumClients else {
        close(descriptor)
        refusedSinceLog += 1
        let now = clock.now
        if lastRefusalLog.map({ $0.duration(to: now) >= .seconds(1) }) ?? true {
          server.write(
            .warning,
            "refused \(refusedSinceLog) connection(s): "
              + "\(configuration.maximumClients) clients already connected")
          refusedSinceLog = 0
          lastRefusalLog = now
        }
        continue
      }
      _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
      var bufferSize = Int32(configuration.sendBufferBytes)
      _ = setsockopt(
        descriptor, SOL_SOCKET, SO_SNDBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
      let identity: PeerIdentity
      do {
        identity =
          listener.isTCP
          ? try PeerIdentity.ofLoopbackTCP(socket: descriptor)
          : try PeerIdentity.of(socket: descriptor)
      } catch {
        server.write(.warning, "refused a connection: cannot identify the peer: \(error)")
        close(descriptor)
        continue
      }
      let client = BrokerClient(descriptor: descriptor, kind: kind, identity: identity)
      // A new peer sees the grant as it is now, not as of the last refresh.
      do {
        grants[identity.clientID] = try server.grantStore.grant(for: identity.clientID)
      } catch {
        grantsReadable = false
      }
      update(&client.session)
      let state = client.session.effective
      if kind == .nmea {
        guard state.status.isAuthorized else {
          server.write(
            .notice,
            "refused NMEA client \(identity.clientID) (pid \(identity.pid)): "
              + "\(state.status.rawValue)")
          close(descriptor)
          continue
        }
        client.session.watch = BrokerRequest.WatchOptions()
      }
      clients[descriptor] = client
      server.setClientCount(clients.count)
      server.write(
        .info,
        (kind == .nmea ? "NMEA client " : "client ")
          + "\(identity.clientID) (pid \(identity.pid)) connected: \(state.status.rawValue)"
          + (state.status.isAuthorized ? ", \(state.accuracy.rawValue)" : ""))
      guard kind == .broker else {
        client.session.announced = state
        continue
      }
      send(version, to: client)
      if let change = client.session.authorizationChange() { announce(change, to: client) }
    }
  }

  private func readFrom(_ client: BrokerClient) {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while !client.isClosing {
      let count = read(client.descriptor, &buffer, buffer.count)
      if count == 0 {
        client.isClosing = true
        return
      }
      if count < 0 {
        if errno == EINTR { continue }
        if errno != EAGAIN && errno != EWOULDBLOCK { client.isClosing = true }
        return
      }
      if client.kind == .nmea { continue }  // NMEA peers only read; what they send is dropped
      client.input.append(contentsOf: buffer[..<count])
      var start = 0
      while let newline = client.input[start...].firstIndex(of: 0x0A) {
        var line = client.input[start..<newline]
        if line.last == 0x0D { line = line.dropLast() }
        start = newline + 1
        if line.count > BrokerRequest.maximumLineLength {
          fail(client, "line longer than \(BrokerRequest.maximumLineLength) bytes", close: true)
          return
        }
        if !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { handle(line, from: client) }
        if client.isClosing { return }
      }
      client.input.removeFirst(start)
      if client.input.count > BrokerRequest.maximumLineLength {
        fail(client, "line longer than \(BrokerRequest.maximumLineLength) bytes", close: true)
        return
      }
    }
  }

  private func closeFinishedClients() {
    let finished = clients.values.filter(\.isClosing)
    guard !finished.isEmpty else { return }
    for client in finished {
      // Best effort: what is already queued (an ERROR, say) goes out if the socket takes it.
      if client.pendingBytes > 0 { flush(client, closing: true) }
      close(client.descriptor)
      clients[client.descriptor] = nil
      for (id, question) in questions where question.client == client.descriptor {
        questions[id] = nil
      }
      server.write(
        .info,
        (client.kind == .nmea ? "NMEA client " : "client ")
          + "\(client.session.identity.clientID) (pid \(client.session.identity.pid)) "
          + "disconnected")
    }
    server.setClientCount(clients.count)
  }

  // MARK: Output

  private func send(_ bytes: [UInt8], to client: BrokerClient) {
    guard !client.isClosing else { return }
    client.output.append(contentsOf: bytes)
    flush(client)
    if client.pendingBytes > configuration.sendBufferBytes {
      client.isClosing = true
      client.output.removeAll()
      client.outputOffset = 0
      server.write(
        .notice,
        "client \(client.session.identity.clientID) (pid \(client.session.identity.pid)) "
          + "does not read: more than \(configuration.sendBufferBytes) bytes pending; "
          + "disconnected")
    }
  }

  private func flush(_ client: BrokerClient, closing: Bool = false) {
    while client.pendingBytes > 0 {
      let written = client.output.withUnsafeBytes { raw in
        Glibc.send(
          client.descriptor, raw.baseAddress! + client.outputOffset, client.pendingBytes,
          Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
      }
      if written < 0 {
        if errno == EINTR { continue }
        if errno != EAGAIN && errno != EWOULDBLOCK && !closing { client.isClosing = true }
        break
      }
      client.outputOffset += written
    }
    if client.outputOffset == client.output.count {
      client.output.removeAll(keepingCapacity: true)
      client.outputOffset = 0
    } else if client.outputOffset > 65536 {
      client.output.removeFirst(client.outputOffset)
      client.outputOffset = 0
    }
  }

  private func fail(_ client: BrokerClient, _ message: String, close: Bool = false) {
    var line = JSONLine(class: "ERROR")
    line.add("message", message)
    send(line.closed + [0x0A], to: client)
    if close {
      flush(client, closing: true)
      client.isClosing = true
    }
  }

  private func announce(_ state: AuthorizationState, to client: BrokerClient) {
    var line = JSONLine(class: "AUTHORIZATION")
    line.add("client", client.session.identity.clientID)
    line.add("status", state.status.rawValue)
    line.add("accuracy", state.accuracy.rawValue)
    send(line.closed + [0x0A], to: client)
  }

  // MARK: Fan-out

  private func deliver(_ item: BrokerServer.Item) {
    switch item {
    case .fix(let fix):
      guard let location = Location(fix) else { return }
      let start = clock.now
      latestFix = (fix, location)
      var encoded = EncodedFix(fix: fix, location: location, policy: configuration.reducedAccuracy)
      for client in clients.values where client.session.watch != nil {
        guard client.session.shouldDeliver(location, reduced: configuration.reducedAccuracy)
        else { continue }
        send(encoded.bytes(for: client.kind, reduced: client.session.isReduced), to: client)
      }
      fanOutCost = start.duration(to: clock.now)
    case .event(let event):
      var bytes: [UInt8]?
      for client in clients.values where client.session.receivesEvents {
        if bytes == nil { bytes = event.jsonLine().closed + [0x0A] }
        send(bytes!, to: client)
      }
    }
  }

  // MARK: Requests

  private func handle(_ line: ArraySlice<UInt8>, from client: BrokerClient) {
    let request: BrokerRequest
    switch BrokerRequest.parse(line) {
    case .success(let parsed): request = parsed
    case .failure(let error):
      fail(client, error.message)
      return
    }
    switch request {
    case .watch(let options):
      client.session.watch = options
      client.session.lastDelivered = nil
      var line = JSONLine(class: "WATCH")
      line.add("enable", true)
      line.add("accuracy", client.session.isReduced ? "reduced" : "full")
      line.add("distance", options.distanceMeters, decimals: 1)
      line.add("events", options.events)
      send(line.closed + [0x0A], to: client)
    case .unwatch:
      client.session.watch = nil
      var line = JSONLine(class: "WATCH")
      line.add("enable", false)
      send(line.closed + [0x0A], to: client)
    case .poll:
      let state = client.session.effective
      guard state.status.isAuthorized else {
        fail(client, "not authorized (\(state.status.rawValue))")
        return
      }
      guard let latest = latestFix else {
        fail(client, "no fix yet")
        return
      }
      var encoded = EncodedFix(
        fix: latest.fix, location: latest.location, policy: configuration.reducedAccuracy)
      send(encoded.bytes(for: .broker, reduced: client.session.isReduced), to: client)
    case .status:
      // Counts and times only, to any peer: no coordinate, no identity of another client; the
      // asker is not counted.
      var line = JSONLine(class: "STATUS")
      line.add("release", configuration.release)
      line.add("clients", clients.values.filter { $0.kind == .broker && $0 !== client }.count)
      line.add(
        "watchers", clients.values.filter { $0.session.watch != nil && $0.kind == .broker }.count)
      line.add("nmeaClients", clients.values.filter { $0.kind == .nmea }.count)
      line.add("lastFix", latestFix?.location.timestamp)
      send(line.closed + [0x0A], to: client)
    case .request(let level):
      ask(level, for: client)
    case .agent(let enable):
      client.session.isAgent = enable
      var line = JSONLine(class: "AGENT")
      line.add("enable", enable)
      send(line.closed + [0x0A], to: client)
      server.write(
        .info,
        "\(client.session.identity.clientID) (pid \(client.session.identity.pid)) "
          + (enable ? "is an agent" : "is no longer an agent"))
    case .answer(let id, let answer):
      answerQuestion(id, answer, from: client)
    }
  }

  private func ask(_ level: GrantLevel, for client: BrokerClient) {
    update(&client.session)
    let state = client.session.effective
    let needsQuestion: Bool
    switch state.status {
    case .notDetermined: needsQuestion = true
    case .authorizedWhenInUse:
      needsQuestion = level == .always && client.session.stored.status == .authorizedWhenInUse
    case .restricted, .denied, .authorizedAlways: needsQuestion = false
    }
    guard needsQuestion else {
      client.session.announced = state
      announce(state, to: client)
      return
    }
    guard client.session.openQuestion == nil else { return }
    let id = nextQuestion
    nextQuestion += 1
    client.session.openQuestion = id
    questions[id] = Question(
      client: client.descriptor, level: level,
      deadline: clock.now + .milliseconds(Int64(configuration.agentTimeoutSeconds * 1000)))
    let identity = client.session.identity
    let agents = clients.values.filter { $0.session.mayAnswer(for: identity) && !$0.isClosing }
    guard
      let agent = agents.first(where: { $0.session.identity.uid == identity.uid })
        ?? agents.first
    else {
      server.write(
        .info,
        "\(identity.clientID) (pid \(identity.pid)) asks for \(level.rawValue); no agent")
      return
    }
    var line = JSONLine(class: "ASK")
    line.add("id", id)
    line.add("client", identity.clientID)
    line.add("pid", Int(identity.pid))
    line.add("level", level.rawValue)
    send(line.closed + [0x0A], to: agent)
  }

  private func answerQuestion(
    _ id: Int, _ answer: BrokerRequest.AgentAnswer, from agent: BrokerClient
  ) {
    guard let question = questions[id], let client = clients[question.client],
      agent.session.mayAnswer(for: client.session.identity)
    else {
      fail(agent, "no open question \(id) for this agent")
      return
    }
    questions[id] = nil
    client.session.openQuestion = nil
    let clientID = client.session.identity.clientID
    switch answer {
    case .once(let accuracy):
      client.session.once = AuthorizationState(status: .authorizedWhenInUse, accuracy: accuracy)
      server.write(.notice, "\(clientID): allowed once (\(accuracy.rawValue)) by an agent")
    case .grant(let level, let accuracy):
      if level == .never, client.session.stored.status == .authorizedWhenInUse {
        break  // a refused upgrade keeps when-in-use
      }
      do {
        try server.grantStore.save(
          Grant(clientID: clientID, level: level, accuracy: accuracy, grantedAt: Date()))
        server.write(
          .notice,
          "\(clientID): \(level.rawValue) (\(accuracy.rawValue)) granted by agent "
            + agent.session.identity.clientID)
      } catch {
        fail(agent, "cannot record the grant: \(error)")
      }
    }
    refreshGrants()
    // The asking client always hears an answer, even when its state did not change.
    if client.session.announced == client.session.effective {
      announce(client.session.effective, to: client)
    }
  }

  private func expireQuestions(now: ContinuousClock.Instant) {
    for (id, question) in questions where question.deadline <= now {
      questions[id] = nil
      guard let client = clients[question.client] else { continue }
      client.session.openQuestion = nil
      // Answered `denied`, not recorded: the client may ask again later.
      announce(AuthorizationState(status: .denied), to: client)
      server.write(
        .info,
        "\(client.session.identity.clientID): no answer to its request; told denied")
    }
  }

  // MARK: Grants

  private func refreshGrants() {
    nextRefresh = clock.now + .milliseconds(Int64(configuration.grantRefreshSeconds * 1000))
    servicesEnabled = server.servicesSwitch.isEnabled
    do {
      grants = Dictionary(
        try server.grantStore.allGrants().map { ($0.clientID, $0) }, uniquingKeysWith: { $1 })
      if !grantsReadable { server.write(.notice, "broker: grants readable again") }
      grantsReadable = true
    } catch {
      if grantsReadable { server.write(.warning, "broker: cannot read the grants: \(error)") }
      grantsReadable = false
    }
    for client in clients.values {
      update(&client.session)
      if client.kind == .nmea {
        let state = client.session.effective
        if !state.status.isAuthorized && !client.isClosing {
          client.isClosing = true
          server.write(
            .notice,
            "NMEA client \(client.session.identity.clientID) "
              + "(pid \(client.session.identity.pid)): \(state.status.rawValue); closed")
        }
        continue
      }
      if let change = client.session.authorizationChange() {
        server.write(
          .info,
          "client \(client.session.identity.clientID) (pid \(client.session.identity.pid)): "
            + "\(change.status.rawValue), \(change.accuracy.rawValue)")
        announce(change, to: client)
      }
    }
  }

  private func update(_ session: inout BrokerSession) {
    session.servicesEnabled = servicesEnabled
    if !grantsReadable {
      session.stored = AuthorizationState(status: .restricted)
    } else {
      session.stored =
        grants[session.identity.clientID]?.state ?? AuthorizationState(status: .notDetermined)
    }
  }
}

/// One fix, encoded at most once per form for all the clients of one delivery.
private struct EncodedFix {
  let fix: Fix
  let location: Location
  let policy: ReducedAccuracy
  private var cache: [Int: [UInt8]] = [:]

  init(fix: Fix, location: Location, policy: ReducedAccuracy) {
    self.fix = fix
    self.location = location
    self.policy = policy
  }

  /// TPV (`.broker`) or NMEA sentences (`.nmea`), full or coarse.
  mutating func bytes(for kind: BrokerClientKind, reduced: Bool) -> [UInt8] {
    let key = (kind == .nmea ? 2 : 0) + (reduced ? 1 : 0)
    if let cached = cache[key] { return cached }
    let source = reduced ? fix.coarse(location, policy: policy) : fix
    var bytes: [UInt8] = []
    switch kind {
    case .broker: source.appendTPV(to: &bytes)
    case .nmea:
      for sentence in NMEAWriter.sentences(for: source) { bytes.append(contentsOf: sentence.utf8) }
    }
    cache[key] = bytes
    return bytes
  }
}
