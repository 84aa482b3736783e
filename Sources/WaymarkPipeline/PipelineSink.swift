import Waymark
import WaymarkCore

/// An output of the ``WaymarkPipeline``: the store's health, the MQTT outbox, the location
/// socket, the hooks, the NDJSON printer, the track, the log.
///
/// `waymarkd` and `waymark replay` build the same pipeline and differ only in their source and
/// their list of sinks. The pipeline calls its sinks in list order, one fix at a time, on its
/// output thread (never on the concurrency pool): a sink may block on the disk, and it must not
/// be shared with another thread.
package protocol PipelineSink: AnyObject {
  /// Takes what one fix did: the fix, its place events and its stays.
  ///
  /// - Throws: an error that ends a replay; the daemon's sinks report their failures and never
  ///   throw.
  func receive(_ step: PipelineStep) throws

  /// Saves what the sink holds in flight (the track's waiting points, the outbox's batch)
  /// without ending anything: the daemon's periodic save and its stop, and the end of a
  /// replay before ``finish(closed:open:)``. Each write's outcome goes to the context's
  /// ``PipelineContext/writes`` as it happens.
  ///
  /// - Returns: the parts that could not be saved (empty when all were).
  func checkpoint() -> [WaymarkPipeline.Failure]

  /// The end of the source: the stays its end closed, then the stay still open (`nil` at none).
  ///
  /// - Throws: as ``receive(_:)``.
  func finish(closed: [StayDetector.Event], open: Stay?) throws
}

/// A sink that also sees each fix before the place monitor does: an MQTT location message goes
/// ahead of the transitions the fix causes, the log's fix line ahead of its events. The
/// pipeline calls only these sinks there (a call through `any PipelineSink` costs a retain and
/// a release of the sink, per fix).
package protocol PreMonitorSink: PipelineSink {
  /// Sees `fix` before the place monitor does.
  ///
  /// - Throws: as ``PipelineSink/receive(_:)``.
  func willMonitor(_ fix: Fix) throws
}

extension PipelineSink {
  /// Nothing in flight.
  package func checkpoint() -> [WaymarkPipeline.Failure] { [] }

  /// Nothing to do at the end.
  package func finish(closed: [StayDetector.Event], open: Stay?) throws {}
}
