import GPSD
import Waymark
import WaymarkCore
import WaymarkPipeline

/// gpsd, read through the daemon's own ``LocationManager`` while the grant holds.
extension DaemonRuntime {
  /// Starts reading gpsd. Each fix goes through the manager on gpsd's reader thread itself
  /// (a driven source: no stream, no task), then to the location socket at once and to the
  /// main loop through the inbox: one hand-off between the reader and the pipeline. gpsd is
  /// read no faster than the loop takes the fixes (the reader waits for room in the inbox);
  /// none is dropped. Health reports go to the manager and to the main loop the same way.
  func startSource() {
    guard source == nil else { return }
    let gpsd = GPSDSource(configuration: GPSDConfiguration(endpoint: configuration.gpsd))
    let source = FixPipeline(
      clientID: configuration.clientID, sourceName: gpsd.fixSource.name,
      authorization: authorization)
    self.source = source
    health = SourceHealth()
    lastMode = nil
    // To the socket's inbox at once, from the reader thread: its clients need not wait for the
    // main loop's disk work.
    let broker = self.broker
    let inbox = self.inbox
    let inputs = self.inputs
    source.start { fix in
      broker?.publish(fix)
      inbox.sendIgnoringCapacity(fix)
    }
    gpsdAttachment = gpsd.attach(
      fix: { fix in
        guard inbox.waitForRoom() else { return }
        source.ingest(fix)
      },
      health: { report in
        source.manager.ingest(report)
        inputs.send(.health(report))
      })
    log.info("following gpsd at \(configuration.gpsd)")
  }

  /// Stops reading gpsd; the fixes it handed over are still processed.
  func stopSource() {
    guard let source else { return }
    gpsdAttachment?.cancel()
    gpsdAttachment = nil
    source.stop()
    self.source = nil
    health = SourceHealth()
    lastMode = nil
  }
}
