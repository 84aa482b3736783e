import FoundationEssentials
import Waymark
import WaymarkCore

/// The source side of the ``WaymarkPipeline``: a fix source read through a ``LocationManager``,
/// whose every fix goes on to one output. `waymarkd` builds it over gpsd (output: the location
/// socket, then the ``PipelineInbox`` of its main loop); `waymark replay` over an NMEA log
/// (output: the inbox of its output thread).
///
/// The output sees the manager's source fixes (``LocationManager/onSourceFix(_:)``): every fix,
/// usable or not, in order, before the accuracy and distance filters, while the client is
/// authorized with full accuracy. It runs on the task or thread that reads the source, one fix
/// at a time, so nothing is dropped; it must return quickly (the inbox's
/// `sendIgnoringCapacity` does), and a source wrapped by ``PipelineInbox/admitting(_:)`` is
/// read no faster than the outputs take.
/// A driven source (``FixSource/driven(name:)``) is read by its owner, which hands each fix to
/// ``ingest(_:)`` on its own thread: `waymarkd` on gpsd's reader thread, replay on the thread
/// that decodes the log; the manager then starts no task.
package final class FixPipeline: Sendable {
  /// The manager the fixes pass through.
  package let manager: LocationManager

  /// The client id of `waymark replay`'s manager.
  package static let replayClientID = "waymark-replay"

  /// A pipeline for `clientID` over `source`, authorized by `authorization`.
  package init(clientID: String, source: FixSource, authorization: AuthorizationCenter) {
    manager = LocationManager(clientID: clientID, source: source, authorization: authorization)
  }

  /// A pipeline over a log the user replays: its manager holds an `always` grant of its own,
  /// in memory (a log is the user's own data; nothing is asked or recorded).
  package static func replaying(_ source: FixSource) -> FixPipeline {
    let grant = Grant(
      clientID: replayClientID, level: .always, grantedAt: Date(timeIntervalSince1970: 0))
    return FixPipeline(
      clientID: replayClientID, source: source,
      authorization: AuthorizationCenter(
        store: InMemoryGrantStore([grant]), agent: PolicyAuthorizationAgent(),
        services: .enabled))
  }

  /// A pipeline over a log read at full speed by the caller, on the caller's thread: the
  /// caller hands each fix to ``ingest(_:)``, which runs it through the manager (the same
  /// `always` grant and decisions as ``replaying(_:)``) and calls the output right there. The
  /// manager and the outputs then share one thread with no hand-off (nothing in a file read at
  /// full speed waits for a clock); the manager starts no task.
  package static func replayingInline(name: String) -> FixPipeline {
    replaying(.driven(name: name))
  }

  /// Runs `fix` through the manager on the calling thread; the output (see ``start(_:)``) gets
  /// it before this returns. For a pipeline over a driven source (``replayingInline(name:)``,
  /// `waymarkd`'s gpsd); one caller at a time.
  package func ingest(_ fix: Fix) { manager.ingest(fix) }

  /// Starts reading the source; `output` gets every fix on the reading task (it must return
  /// quickly: a slow output slows the source, never loses a fix).
  package func start(_ output: @escaping @Sendable (Fix) -> Void) {
    manager.onSourceFix(output)
    manager.startUpdatingLocation()
  }

  /// Stops reading the source.
  package func stop() {
    manager.stopUpdatingLocation()
    manager.onSourceFix(nil)
  }
}
