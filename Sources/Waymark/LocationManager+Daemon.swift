import WaymarkClient

extension LocationManager {
  /// A manager that gets locations and authorization from `waymarkd`'s socket at `path`.
  ///
  /// - Throws: `BrokerError` when the daemon cannot be reached.
  public static func throughDaemon(socketPath path: String = BrokerConnection.defaultPath)
    async throws -> LocationManager
  {
    try await DaemonLocationService(socketPath: path).makeManager()
  }

  /// The daemon's manager when its socket exists and the daemon answers (with `VERSION` of
  /// protocol major `DaemonMessage.protocolMajor` and an `AUTHORIZATION`, within 5 s), else
  /// `fallback()` (for example a manager on a `GPSDSource`, for a machine without waymarkd).
  /// A socket file nobody listens on (a daemon that died) counts as absent. `fallback` is
  /// called only when it is used.
  public static func preferringDaemon(
    socketPath path: String = BrokerConnection.defaultPath,
    otherwise fallback: () -> LocationManager
  ) async -> LocationManager {
    if let service = await DaemonLocationService.answering(at: path) {
      return service.makeManager()
    }
    return fallback()
  }
}
