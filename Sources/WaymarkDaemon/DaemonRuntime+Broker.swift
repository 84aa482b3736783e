import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkDaemonConfiguration
import WaymarkProcess
import WaymarkStore

/// The location socket's start-up: limits, watched directories, agents and polkit.
extension DaemonRuntime {
  static func startBroker(
    _ configuration: DaemonConfiguration, database: Database, log: DaemonLog,
    environment: [String: String], heldMonitors: HeldMonitorRegistry? = nil,
    time: TimeSource = .system, onGrantsChanged: @escaping @Sendable () -> Void
  ) throws -> BrokerServer? {
    let path = configuration.socketPath
    let nmeaPath = configuration.nmeaSocketPath
    guard path != nil || nmeaPath != nil || configuration.nmeaTCP != nil else { return nil }
    let grants = DatabaseGrantStore(database: database)
    var settings = BrokerServer.Configuration(path: path, nmeaPath: nmeaPath)
    settings.nmeaTCP = configuration.nmeaTCP.map { ($0.host, $0.port) }
    settings.maximumClients = configuration.socketClients
    let limit = DescriptorLimit.raise(forClients: configuration.socketClients)
    if limit.after > limit.before {
      log.info("open-file limit raised from \(limit.before) to \(limit.after)")
    }
    let fitting = DescriptorLimit.clients(allowedBy: limit.after)
    if fitting < configuration.socketClients {
      log.warning(
        "the open-file limit (\(limit.after)) leaves room for \(fitting) clients, not "
          + "socket-clients = \(configuration.socketClients); raise LimitNOFILE")
      settings.maximumClients = fitting
    }
    settings.sendBufferBytes = configuration.socketBufferBytes
    settings.maximumClientsPerUser = configuration.socketClientsPerUser
    // The store's directory and the switch's: the broker checks the grants after a change.
    settings.watchedDirectories = [configuration.storePath, LocationServicesSwitch.defaultPath]
      .map { path in String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) }
      .filter { !$0.isEmpty }
    if let agents = configuration.agents { settings.agents = agents }
    settings.agentTimeoutSeconds = configuration.agentTimeoutSeconds
    settings.time = time
    settings.onGrantsChanged = onGrantsChanged
    let broker = try BrokerServer(
      configuration: settings, grants: grants, services: .file(),
      decisionAuthority: decisionAuthority(
        configuration, log: log, environment: environment, time: time),
      heldMonitors: heldMonitors
    ) { priority, message in log.log(priority, message) }
    if let path { log.notice("location socket \(path)") }
    if let nmeaPath { log.notice("NMEA socket \(nmeaPath)") }
    if let tcp = configuration.nmeaTCP { log.notice("NMEA on TCP \(tcp)") }
    return broker
  }

  /// Who, besides root and group `waymark`, may make an agent's answer persist: polkit
  /// (`polkit = yes`) or no one.
  static func decisionAuthority(
    _ configuration: DaemonConfiguration, log: DaemonLog, environment: [String: String],
    time: TimeSource
  ) -> any DecisionAuthority {
    guard configuration.usesPolkit else {
      log.info(
        "polkit = no: only agents running as root or in group waymark decide; other agents' "
          + "answers leave the program denied")
      return NoDecisionAuthority()
    }
    if !PolkitAuthority.isInstalled {
      log.warning(
        "polkit = yes but \(PolkitAuthority.defaultPKCheck) is missing: agents' answers count "
          + "only from root or group waymark")
    }
    log.info(
      "polkit = yes: other agents' answers count when polkit confirms "
        + "\(PolkitAuthority.ownAction) or \(PolkitAuthority.otherAction)")
    return PolkitAuthority(log: log, environment: environment, time: time)
  }
}
