import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkPipeline

/// The location socket's events: each place event (not one recorded late) and each stay that
/// began or ended, to the socket's watchers (``BrokerServer/publish(_:)-event`` returns at
/// once). The fixes themselves reach the socket earlier, from the task that reads the source.
package final class BrokerSink: PipelineSink {
  private let broker: BrokerServer
  private let context: PipelineContext

  /// A sink publishing to `broker`; `context` names the declared place of a stay.
  package init(broker: BrokerServer, context: PipelineContext) {
    self.broker = broker
    self.context = context
  }

  package func receive(_ step: PipelineStep) {
    for outcome in step.places where !outcome.isLate { broker.publish(outcome.event) }
    for event in step.stays {
      broker.publish(event.stay, place: context.place(of: event.stay).map(PlaceSnapshot.init))
    }
  }
}
