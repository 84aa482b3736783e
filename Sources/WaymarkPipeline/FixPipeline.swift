import FoundationEssentials
import Waymark
import WaymarkCore

/// The source side of the ``WaymarkPipeline``: a fix source read through a ``LocationManager``,
/// whose every fix goes on to one output, while the grant holds. Both hosts drive it
/// (``FixSource/driven(name:)``): they read their source on a thread of their own and hand each
/// fix to ``ingest(_:)`` there, and the manager starts no task. `waymarkd` over gpsd, on gpsd's
/// reader thread (output: the location socket, then the ``PipelineInbox`` of its main loop);
/// `waymark replay` and `waymark import` over a log or a file, on the replay's output thread
/// (output: the pipeline itself, no hand-off).
///
/// The manager is the authorization gate (``LocationManager/gate(_:)``): the output sees every
/// fix, usable or not, in order, before the accuracy and distance filters, while the client is
/// authorized with full accuracy, on the thread that calls `ingest`, before `ingest` returns; it
/// must return quickly (the inbox's `sendIgnoringCapacity` does). Nobody reads these managers'
/// locations, so they compute none.
package final class FixPipeline: Sendable {
  /// The manager the fixes pass through.
  package let manager: LocationManager

  /// The client id of `waymark replay`'s manager.
  package static let replayClientID = "waymark-replay"

  /// A pipeline for `clientID` over the driven source `sourceName` (the caller reads the source
  /// and hands its fixes to ``ingest(_:)``), authorized by `authorization`.
  package init(clientID: String, sourceName: String, authorization: AuthorizationCenter) {
    manager = LocationManager(
      clientID: clientID, source: .driven(name: sourceName), authorization: authorization)
  }

  /// A pipeline over a log (or an imported file) the user replays, named `name`: a driven
  /// source whose manager holds an `always` grant of its own, in memory (a log is the user's own
  /// data; nothing is asked or recorded). The caller hands each fix to ``ingest(_:)`` on its own
  /// thread.
  package static func replaying(name: String) -> FixPipeline {
    let grant = Grant(
      clientID: replayClientID, level: .always, grantedAt: Date(timeIntervalSince1970: 0))
    return FixPipeline(
      clientID: replayClientID, sourceName: name,
      authorization: AuthorizationCenter(
        store: InMemoryGrantStore([grant]), agent: PolicyAuthorizationAgent(),
        services: .enabled))
  }

  /// Runs `fix` through the manager's authorization gate on the calling thread
  /// (``LocationManager/gate(_:)``: the output, see ``start(_:)``, gets it before this returns
  /// while the grant holds; no location is computed, as nobody reads this manager's). For a
  /// pipeline over a driven source (``replaying(name:)``, `waymarkd`'s gpsd); one caller at a
  /// time.
  package func ingest(_ fix: Fix) { manager.gate(fix) }

  /// Starts passing fixes on; `output` gets every fix ``ingest(_:)`` passes, on its caller's
  /// thread (it must return quickly: a slow output slows the source, never loses a fix).
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
