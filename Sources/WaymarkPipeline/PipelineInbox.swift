import WaymarkCore

/// `waymarkd`'s hand-off of fixes from the thread that reads gpsd to the pipeline's output
/// thread (its main loop): a ``Channel`` of fixes, made with the policy ``ChannelOverflow/wait``
/// (no fix is ever dropped) and a `whenNonEmpty` that wakes the output thread (one wake-up for a
/// batch, never one per fix). (`waymark replay` needs none: its output thread reads the log.)
///
/// - The ``LocationManager``'s output sends each fix with ``Channel/sendIgnoringCapacity(_:)``
///   (from a callback that must not block; the reading side waited for room before it read).
/// - The output thread takes them all at once, oldest first, with ``Channel/receiveAll()``.
///
/// **Back-pressure, not loss.** The thread that reads the source waits in
/// ``Channel/waitForRoom(timeoutMilliseconds:)`` before it reads the next fix, so the source is
/// read no faster than the output thread takes (`waymarkd`'s gpsd reader: gpsd buffers
/// meanwhile). Closing the inbox (the outputs stopped) makes that wait fail: the source is read
/// no more.
package typealias PipelineInbox = Channel<Fix>

extension Channel where Element == Fix {
  /// How many fixes may wait in a host's inbox before its source is held back.
  package static var inboxCapacity: Int { 4096 }
}
