import FoundationEssentials
import Waymark
import WaymarkCore

extension BrokerLoop {
  // MARK: Requests

  func handle(_ line: ArraySlice<UInt8>, from client: BrokerClient) {
    let request: DaemonRequest
    switch DaemonRequest.decode(line) {
    case .success(let parsed): request = parsed
    case .failure(let error):
      fail(client, error.message)
      return
    }
    switch request {
    case .watch(let options):
      client.session.watch = options
      client.session.lastDelivered = nil
      let answer = DaemonMessage.Watch(
        enabled: true, accuracy: client.session.isReduced ? .reduced : .full,
        distanceMeters: options.distanceMeters, events: options.events, visits: options.visits)
      send(DaemonMessage.watch(answer).line, to: client)
    case .unwatch:
      client.session.watch = nil
      send(DaemonMessage.watch(DaemonMessage.Watch(enabled: false)).line, to: client)
    case .poll:
      poll(for: client)
    case .status:
      // Counts to any peer, the latest fix's time to an authorized one (or root, who may read
      // the store anyway) only: no coordinate, no identity of another client; the asker is not
      // counted.
      let status = DaemonMessage.Status(
        release: configuration.release,
        clients: clients.values.filter { $0.kind == .broker && $0 !== client }.count,
        watchers: clients.values.filter { $0.session.watch != nil && $0.kind == .broker }.count,
        nmeaClients: clients.values.filter { $0.kind == .nmea }.count,
        lastFix: client.session.disclosure(of: .fixTime) == .full
          ? latestFix?.location.timestamp : nil)
      send(DaemonMessage.status(status).line, to: client)
    case .request(let level):
      ask(level, for: client)
    case .session(let options):
      holdSession(options, for: client)
    case .endSession:
      holdSession(nil, for: client)
    case .agent(let enable, let scripted):
      registerAgent(client, enable: enable, scripted: scripted)
    case .answer(let id, let answer):
      answerQuestion(id, answer, from: client)
    case .monitor(let name, let operation):
      handleMonitor(name, operation, from: client)
    }
  }

  /// One TPV with the latest fix; for a reduced client, the position its identity may have now
  /// (a new one on an interval boundary, else the last one released again).
  private func poll(for client: BrokerClient) {
    guard client.session.disclosure(of: .position) != .withheld else {
      fail(client, "not authorized (\(client.session.effective.status.rawValue))")
      return
    }
    guard let latest = latestFix else {
      fail(client, "no fix yet")
      return
    }
    var encoded = EncodedFix(
      fix: latest.fix, location: latest.location, policy: configuration.reducedAccuracy)
    guard client.session.isReduced else {
      send(encoded.bytes(for: .broker, reduced: false), to: client)
      return
    }
    let identity = client.session.identity.clientID
    var release = reducedReleases[identity] ?? ReducedRelease()
    if release.mayRelease(
      at: latest.location.timestamp, interval: configuration.reducedAccuracy.minimumInterval)
    {
      release.release(encoded.coarse)
      reducedReleases[identity] = release
    }
    guard let released = release.last else { return }
    send(EncodedFix.bytes(released, for: .broker), to: client)
  }
}
