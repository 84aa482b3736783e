import WaymarkCore

/// The hand-off of fixes from the thread or task that reads the source to the pipeline's
/// output thread: a ``Channel`` of fixes, made by each host with the policy
/// ``ChannelOverflow/wait`` (no fix is ever dropped) and a `whenNonEmpty` that wakes its output
/// thread (one wake-up for a batch, never one per fix).
///
/// - The ``LocationManager``'s output sends each fix with ``Channel/sendIgnoringCapacity(_:)``
///   (from a callback that must not block; the reading side waited for room before it read).
/// - The output thread takes them all at once, oldest first, with ``Channel/receiveAll()``.
///
/// **Back-pressure, not loss.** A source read through ``Channel/admitting(_:)`` is read no
/// faster than the output thread takes: while ``Channel/capacity`` fixes wait, the reading task
/// suspends (it does not block a thread of the concurrency pool) until the next receive; a log
/// is then read at the outputs' pace. A source read on a thread of its own waits in
/// ``Channel/waitForRoom(timeoutMilliseconds:)`` instead (`waymarkd`'s gpsd reader: gpsd
/// buffers meanwhile). Closing the inbox (the outputs stopped) makes the source read no more.
package typealias PipelineInbox = Channel<Fix>

extension Channel where Element == Fix {
  /// How many fixes may wait in a host's inbox before its source is held back.
  package static var inboxCapacity: Int { 4096 }

  /// `source`, read only while this inbox has room (ends when the inbox is closed).
  package func admitting(_ source: FixSource) -> FixSource {
    FixSource(
      name: source.name, health: { source.health() },
      fixes: {
        let iterator = SourceIterator(source.fixes().makeAsyncIterator())
        return AsyncStream(unfolding: { [self] in
          guard await waitForRoom() else { return nil }
          return await iterator.next()
        })
      })
  }
}

/// The iterator of a source's stream, advanced by one unfolding closure at a time.
private final class SourceIterator: @unchecked Sendable {
  // @unchecked: `AsyncStream(unfolding:)` calls its closure once at a time, so `next()` never
  // overlaps itself.
  private var base: AsyncStream<Fix>.Iterator

  init(_ base: AsyncStream<Fix>.Iterator) { self.base = base }

  func next() async -> Fix? { await base.next() }
}
