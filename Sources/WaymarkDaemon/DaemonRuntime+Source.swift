import GPSD
import Waymark
import WaymarkCore
import WaymarkPipeline

/// gpsd, read through the daemon's own ``LocationManager`` while the grant holds.
extension DaemonRuntime {
  /// Starts reading gpsd: its fixes go to the location socket at once, from the task that
  /// reads them, and to the main loop through the inbox (gpsd is read no faster than the loop
  /// takes them; none is dropped).
  func startSource() {
    guard source == nil else { return }
    let gpsd = GPSDSource(configuration: GPSDConfiguration(endpoint: configuration.gpsd))
    let source = FixPipeline(
      clientID: configuration.clientID, source: inbox.admitting(gpsd.fixSource),
      authorization: authorization)
    self.source = source
    health = SourceHealth()
    lastMode = nil
    let inputs = self.inputs
    let healthReports = source.manager.healthUpdates
    sourceTasks = [
      Task {
        for await report in healthReports { await inputs.send(.health(report)) }
      }
    ]
    // Straight to the socket's clients, from the task that reads gpsd: they need not wait for
    // the main loop's disk work.
    let broker = self.broker
    let inbox = self.inbox
    source.start { fix in
      broker?.publish(fix)
      inbox.push(fix)
    }
    log.info("following gpsd at \(configuration.gpsd)")
  }

  /// Stops reading gpsd; the fixes it handed over are still processed.
  func stopSource() {
    guard let source else { return }
    source.stop()
    for task in sourceTasks { task.cancel() }
    sourceTasks = []
    self.source = nil
    health = SourceHealth()
    lastMode = nil
  }
}
