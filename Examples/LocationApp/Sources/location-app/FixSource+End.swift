import Waymark

extension FixSource {
  /// This source, calling `handler` when a run's fixes end: after its consumer has taken the
  /// last fix and asked for the next one.
  ///
  /// A `LocationManager` delivers each fix's location before it asks for the next fix, so when
  /// `handler` runs, every location of the run has been delivered.
  func onEnd(_ handler: @escaping @Sendable () -> Void) -> FixSource {
    let base = self
    return FixSource(
      name: name, health: { base.health() },
      fixes: {
        let run = FixRun(base.fixes())
        return AsyncStream(unfolding: {
          guard let fix = await run.next() else {
            handler()
            return nil
          }
          return fix
        })
      })
  }
}

/// The iterator of one run. Only the stream's unfolding closure uses it, one call at a time.
private final class FixRun: @unchecked Sendable {
  private var iterator: AsyncStream<Fix>.Iterator

  init(_ fixes: AsyncStream<Fix>) { iterator = fixes.makeAsyncIterator() }

  func next() async -> Fix? { await iterator.next() }
}
