import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore

extension BrokerLoop {
  // MARK: Output

  func send(_ bytes: [UInt8], to client: BrokerClient) {
    guard !client.isClosing else { return }
    if client.pendingBytes == 0 {
      // Nothing queued: send straight from `bytes` (shared by all the clients of a fan-out)
      // and keep only what the socket did not take.
      let written = sendNow(bytes, to: client)
      if written == bytes.count { return }
      client.output.removeAll(keepingCapacity: true)
      client.outputOffset = 0
      client.output.append(contentsOf: bytes[written...])
    } else {
      client.output.append(contentsOf: bytes)
      flush(client)
    }
    if client.pendingBytes > configuration.sendBufferBytes {
      client.isClosing = true
      client.output.removeAll()
      client.outputOffset = 0
      server.write(
        .notice,
        "\(client.logName) does not read: more than \(configuration.sendBufferBytes) bytes "
          + "pending; disconnected")
    }
  }

  /// Sends as much of `bytes` as the socket takes without blocking; returns how much.
  private func sendNow(_ bytes: [UInt8], to client: BrokerClient) -> Int {
    var sent = 0
    while sent < bytes.count {
      let written = bytes.withUnsafeBytes { raw in
        Glibc.send(
          client.descriptor, raw.baseAddress! + sent, bytes.count - sent,
          Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
      }
      if written < 0 {
        if errno == EINTR { continue }
        if errno != EAGAIN && errno != EWOULDBLOCK { client.isClosing = true }
        break
      }
      sent += written
    }
    return sent
  }

  func flush(_ client: BrokerClient, closing: Bool = false) {
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

  func fail(_ client: BrokerClient, _ message: String, close: Bool = false) {
    send(DaemonMessage.error(message: message).line, to: client)
    if close {
      flush(client, closing: true)
      client.isClosing = true
    }
  }

  func announce(_ state: AuthorizationState, to client: BrokerClient) {
    let authorization = DaemonMessage.Authorization(
      clientID: client.session.identity.clientID, state: state)
    send(DaemonMessage.authorization(authorization).line, to: client)
    // A client holding a service session hears what it is granted after every AUTHORIZATION;
    // one that never sent SESSION (protocol 1.2) gets exactly the lines it always did.
    if client.session.serviceSession != nil { sendSession(to: client) }
  }

  // MARK: Fan-out

  func deliver(_ item: BrokerServer.Item) {
    switch item {
    case .fix(let fix):
      guard let location = Location(fix) else { return }
      latestFix = (fix, location)
      var encoded = EncodedFix(fix: fix, location: location, policy: configuration.reducedAccuracy)
      // The full TPV, which most clients get, without a cache lookup per client.
      var fullTPV: [UInt8]?
      for client in clients.values where client.session.watch != nil {
        let reduced = client.session.isReduced
        // A client's release is only read for reduced delivery: no lookup for the others.
        let identity = reduced ? client.session.identity.clientID : ""
        var release = reduced ? reducedReleases[identity] ?? ReducedRelease() : ReducedRelease()
        guard
          client.session.shouldDeliver(
            location, reduced: configuration.reducedAccuracy, release: release)
        else { continue }
        if reduced {
          release.release(encoded.coarse)
          reducedReleases[identity] = release
        } else if client.kind == .broker {
          if fullTPV == nil { fullTPV = encoded.bytes(for: .broker, reduced: false) }
          send(fullTPV!, to: client)
          continue
        }
        send(encoded.bytes(for: client.kind, reduced: reduced), to: client)
      }
      forgetOldReleases(now: location.timestamp)
    case .event(let event):
      var bytes: [UInt8]?
      for client in clients.values where client.session.receivesEvents {
        if bytes == nil { bytes = DaemonMessage.placeEvent(event).line }
        send(bytes!, to: client)
      }
    case .visit(let stay, let place):
      var bytes: [UInt8]?
      for client in clients.values where client.session.receivesVisits {
        if bytes == nil {
          bytes = stay.visitLine(place: place, source: stay.source).closed + [0x0A]
        }
        send(bytes!, to: client)
      }
    case .decision(let id, let allowed):
      if let verdict = questions.decide(id, allowed: allowed) { settle(verdict) }
    case .held(let events):
      deliverHeld(events)
    case .identified(let descriptor, let result):
      identified(descriptor, result)
    }
  }

  /// Forgets releases two intervals old (they hold nothing back any more), when there are
  /// many.
  private func forgetOldReleases(now: Date) {
    guard reducedReleases.count > 256 else { return }
    let horizon = 2 * configuration.reducedAccuracy.minimumInterval
    reducedReleases = reducedReleases.filter { entry in
      guard let time = entry.value.last?.time else { return false }
      return now.timeIntervalSince(time) < horizon
    }
  }
}

/// One fix, encoded at most once per form for all the clients of one delivery.
struct EncodedFix {
  let fix: Fix
  let location: Location
  let policy: ReducedAccuracy
  private var cache: [Int: [UInt8]] = [:]

  init(fix: Fix, location: Location, policy: ReducedAccuracy) {
    self.fix = fix
    self.location = location
    self.policy = policy
  }

  /// The fix as reduced clients get it.
  var coarse: Fix { fix.coarse(location, policy: policy) }

  /// TPV (`.broker`) or NMEA sentences (`.nmea`), full or coarse.
  mutating func bytes(for kind: BrokerClientKind, reduced: Bool) -> [UInt8] {
    let key = (kind == .nmea ? 2 : 0) + (reduced ? 1 : 0)
    if let cached = cache[key] { return cached }
    let bytes = Self.bytes(reduced ? coarse : fix, for: kind)
    cache[key] = bytes
    return bytes
  }

  /// `fix` as a TPV line or NMEA sentences.
  static func bytes(_ fix: Fix, for kind: BrokerClientKind) -> [UInt8] {
    var bytes: [UInt8] = []
    switch kind {
    case .broker: fix.appendTPV(to: &bytes)
    case .nmea:
      for sentence in NMEAWriter.sentences(for: fix) { bytes.append(contentsOf: sentence.utf8) }
    }
    return bytes
  }
}
