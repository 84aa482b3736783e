import FoundationEssentials
import GPSD
import NMEA
import WaymarkClient
import WaymarkCore

/// Where ``LocationUpdate/liveUpdates(_:source:)`` gets its locations: waymarkd, gpsd, or a
/// `FixSource` of one's own (a log through `NMEAReplay.source(path:)`, a script in tests).
///
/// ```swift
/// LocationUpdate.liveUpdates()                                   // waymarkd, else gpsd
/// LocationUpdate.liveUpdates(source: .gpsd())                    // gpsd on localhost:2947
/// LocationUpdate.liveUpdates(source: .fixes(NMEAReplay.source(path: "drive.nmea")))
/// ```
public struct LiveSource: Sendable {
  enum Kind: Sendable {
    case automatic(socketPath: String, fallback: FixSource, clientID: String, AuthorizationCenter)
    case daemon(socketPath: String)
    case local(FixSource, clientID: String, authorization: AuthorizationCenter)
  }

  let kind: Kind
  let clock: any Clock<Duration>

  /// waymarkd when a socket exists at `socketPath` and the daemon answers (within 5 s), else
  /// gpsd at `gpsd` under `clientID`'s grant in `authorization` (by default this program's
  /// name, ``defaultClientID``, in ``AuthorizationCenter/shared``). A socket nobody listens on
  /// counts as absent.
  public static func automatic(
    socketPath: String = BrokerConnection.defaultPath,
    gpsd: GPSDConfiguration = GPSDConfiguration(),
    clientID: String = LiveSource.defaultClientID,
    authorization: AuthorizationCenter = .shared
  ) -> LiveSource {
    LiveSource(
      kind: .automatic(
        socketPath: socketPath, fallback: GPSDSource(configuration: gpsd).fixSource,
        clientID: clientID, authorization),
      clock: ContinuousClock())
  }

  /// waymarkd at the default socket, else gpsd on localhost — unless the environment says
  /// otherwise, so that a program runs unchanged against a log or a daemon of its own (as
  /// Xcode's simulated locations let an iOS app):
  ///
  /// - `WAYMARK_SIMULATED_LOG=<file.nmea>`: that log instead, at full speed, under this
  ///   program's grant (``defaultClientID`` in ``AuthorizationCenter/shared``); the updates end
  ///   with the log.
  /// - `WAYMARK_SOCKET=<path>`: that socket instead of `/run/waymark/waymark.sock`.
  public static var automatic: LiveSource {
    environmentChoice(ProcessInfo.processInfo.environment)
  }

  /// ``automatic`` as `environment` chooses it.
  static func environmentChoice(_ environment: [String: String]) -> LiveSource {
    if let log = environment["WAYMARK_SIMULATED_LOG"], !log.isEmpty {
      return fixes(NMEAReplay.source(path: log))
    }
    let socket = environment["WAYMARK_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    return automatic(socketPath: socket ?? BrokerConnection.defaultPath)
  }

  /// waymarkd only: the daemon's fixes under the grant it holds for this program (its
  /// `<user>:<exe>` id), asked through its agent. Iterating throws `BrokerError` when the
  /// daemon cannot be reached.
  public static func daemon(socketPath: String = BrokerConnection.defaultPath) -> LiveSource {
    LiveSource(kind: .daemon(socketPath: socketPath), clock: ContinuousClock())
  }

  /// gpsd directly, under `clientID`'s grant in `authorization`.
  public static func gpsd(
    _ configuration: GPSDConfiguration = GPSDConfiguration(),
    clientID: String = LiveSource.defaultClientID,
    authorization: AuthorizationCenter = .shared
  ) -> LiveSource {
    LiveSource(
      kind: .local(
        GPSDSource(configuration: configuration).fixSource, clientID: clientID,
        authorization: authorization),
      clock: ContinuousClock())
  }

  /// Any fix source (a log, a script), under `clientID`'s grant in `authorization`; the stale
  /// time of the configuration is measured on `clock`.
  public static func fixes(
    _ source: FixSource, clientID: String = LiveSource.defaultClientID,
    authorization: AuthorizationCenter = .shared,
    clock: any Clock<Duration> = ContinuousClock()
  ) -> LiveSource {
    LiveSource(
      kind: .local(source, clientID: clientID, authorization: authorization), clock: clock)
  }

  /// This program's name (its executable's file name): the client id of a local source's
  /// grant, as `waymark auth` records it.
  public static var defaultClientID: String {
    let path = CommandLine.arguments.first ?? "program"
    return path.split(separator: "/").last.map(String.init) ?? path
  }

  /// A ``LocationManager`` on this source, for an adapter that needs the manager itself (the
  /// `CLLocationManager` of `WaymarkCoreLocation`): the source chosen as
  /// ``LocationUpdate/liveUpdates(_:source:)`` chooses it, its grant that source's.
  ///
  /// - Parameter sourceEnded: called once when the source's fixes end by themselves (a log at
  ///   its end, the daemon closing the connection), after the last fix was taken.
  /// - Returns: the manager, and what closes what was opened for it (the daemon's connection).
  /// - Throws: `BrokerError` when the source is ``daemon(socketPath:)`` and cannot be reached.
  public func openLocationManager(sourceEnded: @escaping @Sendable () -> Void) async throws -> (
    manager: LocationManager, close: @Sendable () -> Void
  ) {
    try await makeManager(ended: sourceEnded)
  }

  /// A manager on this source whose fixes report their end through `ended`, and how to close
  /// what was opened for it.
  func makeManager(ended: @escaping @Sendable () -> Void) async throws -> (
    manager: LocationManager, close: @Sendable () -> Void
  ) {
    switch kind {
    case .automatic(let socketPath, let fallback, let clientID, let authorization):
      if let service = await DaemonLocationService.answering(at: socketPath) {
        return manager(on: service, ended: ended)
      }
      let local = LiveSource.fixes(fallback, clientID: clientID, authorization: authorization)
      return try await local.makeManager(ended: ended)
    case .daemon(let socketPath):
      return manager(on: try await DaemonLocationService(socketPath: socketPath), ended: ended)
    case .local(let source, let clientID, let authorization):
      let manager = LocationManager(
        clientID: clientID, source: source.reportingEnd(ended), authorization: authorization,
        clock: clock)
      return (manager, {})
    }
  }

  private func manager(on service: DaemonLocationService, ended: @escaping @Sendable () -> Void)
    -> (manager: LocationManager, close: @Sendable () -> Void)
  {
    let manager = LocationManager(
      clientID: service.clientID, source: service.fixSource.reportingEnd(ended),
      authorization: service.authorization, clock: clock)
    return (manager, { service.close() })
  }
}

extension FixSource {
  /// The same source, calling `ended` when a run's fixes end by themselves (a log at its end, a
  /// closed connection), after the consumer asked for the fix past the last one: every fix was
  /// taken by then.
  fileprivate func reportingEnd(_ ended: @escaping @Sendable () -> Void) -> FixSource {
    FixSource(
      name: name, health: { health() },
      fixes: {
        let box = IteratorBox(fixes().makeAsyncIterator())
        return AsyncStream(unfolding: {
          if let fix = await box.next() { return fix }
          if !Task.isCancelled { ended() }
          return nil
        })
      })
  }
}

/// One consumer's iterator of a source's fixes, handed to `AsyncStream(unfolding:)` (which
/// calls it from one task at a time).
private final class IteratorBox: @unchecked Sendable {
  private var iterator: AsyncStream<Fix>.Iterator

  init(_ iterator: AsyncStream<Fix>.Iterator) { self.iterator = iterator }

  func next() async -> Fix? { await iterator.next() }
}
