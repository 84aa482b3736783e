import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkPipeline

/// The monitors waymarkd holds for apps: every fix with a position goes through them
/// (``HeldMonitorRegistry/process(_:)``, on fix time), their events are stored, then handed
/// to the location socket for the apps reading them (``BrokerServer/publish(held:)`` returns at
/// once).
package final class HeldMonitorSink: PipelineSink {
  private let registry: HeldMonitorRegistry
  private let broker: BrokerServer
  private let log: DaemonLog
  private var failing = false

  /// A sink running fixes through `registry` and publishing to `broker`; failures to store
  /// go to `log` (once until the next success).
  package init(registry: HeldMonitorRegistry, broker: BrokerServer, log: DaemonLog) {
    self.registry = registry
    self.broker = broker
    self.log = log
  }

  /// Runs the step's fix through the held monitors and publishes their events.
  package func receive(_ step: PipelineStep) {
    guard let location = Location(step.fix) else { return }
    do {
      broker.publish(held: try registry.process(location))
      if failing {
        failing = false
        log.notice("held monitors: stored again")
      }
    } catch {
      if !failing {
        failing = true
        log.warning("held monitors: cannot store their events: \(LogText.escaped("\(error)"))")
      }
    }
  }
}
