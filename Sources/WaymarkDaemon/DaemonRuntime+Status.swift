import WaymarkCore

/// What the daemon tells systemd (`STATUS=`) and logs: gpsd's and the receiver's health, the
/// grant, the fix mode and how many places it monitors. Never where the device is: any user
/// reads the status line (`systemctl show -p StatusText waymarkd`) without a grant, so it names
/// no place, and not whether the device is at one.
extension DaemonRuntime {
  /// Logs what changed in gpsd's health (reachable, receiver present) and keeps its mode.
  func handle(_ report: SourceHealth) {
    let before = health
    health = report
    if report.service != before.service {
      switch report.service {
      case .reachable:
        log.notice("connected to gpsd at \(configuration.gpsd)")
      case .unreachable:
        log.warning(
          "gpsd at \(configuration.gpsd) unreachable"
            + (report.lastError.map { ": \($0)" } ?? ""))
      case .unknown:
        break
      }
    }
    if report.devicePresent != before.devicePresent, report.service == .reachable {
      if report.devicePresent == true {
        log.notice("receiver present" + (report.device.map { ": \($0)" } ?? ""))
      } else if report.devicePresent == false {
        log.warning("gpsd reports no receiver")
      }
    }
    if report.mode != before.mode { lastMode = report.mode }
  }

  func currentStatus() -> String {
    if let problem = authorizationProblem { return "not authorized: \(problem)" }
    if health.service != .reachable {
      return "waiting for gpsd at \(configuration.gpsd)"
    }
    if health.devicePresent == false { return "waiting for a receiver (gpsd has no device)" }
    guard let mode = lastMode, mode == .twoDimensional || mode == .threeDimensional else {
      return "no fix"
    }
    let fix = mode == .threeDimensional ? "3D fix" : "2D fix"
    return "\(fix), \(monitor.placeCount) place(s) monitored"
  }

  func updateStatus() {
    let text = currentStatus()
    guard text != status else { return }
    status = text
    notifier.status(text)
    log.info("status: \(text)")
  }
}
