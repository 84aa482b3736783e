import Waymark
import WaymarkCore
import WaymarkPipeline

/// The hook commands: each place event (not one recorded late) to the ``HookRunner``, whose
/// own thread runs them.
package final class HookSink: PipelineSink {
  private let hooks: HookRunner

  /// A sink handing events to `hooks`.
  package init(hooks: HookRunner) {
    self.hooks = hooks
  }

  package func receive(_ step: PipelineStep) {
    for outcome in step.places where !outcome.isLate { hooks.enqueue(outcome.event) }
  }
}
