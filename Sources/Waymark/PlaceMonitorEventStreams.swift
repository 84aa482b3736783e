import FoundationEssentials
import Synchronization
import WaymarkCore

/// A multicast of place events to any number of `AsyncStream` subscribers. No replay: events
/// are not state, a subscriber gets what happens after it subscribed. Unbounded buffers: events
/// are rare and none may be lost; the producer never waits.
final class PlaceEventStreams: Sendable {
  private struct State {
    var nextID: UInt64 = 0
    var continuations: [UInt64: AsyncStream<PlaceEvent>.Continuation] = [:]
    var isFinished = false
  }

  private let state = Mutex(State())

  func makeStream() -> AsyncStream<PlaceEvent> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: PlaceEvent.self, bufferingPolicy: .unbounded)
    let id = state.withLock { state -> UInt64? in
      if state.isFinished { return nil }
      let id = state.nextID
      state.nextID += 1
      state.continuations[id] = continuation
      return id
    }
    guard let id else {
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
    }
    return stream
  }

  /// Number of live subscribers.
  var subscriberCount: Int { state.withLock { $0.continuations.count } }

  func yield(_ events: [PlaceEvent]) {
    let targets = state.withLock { state in
      state.continuations.sorted { $0.key < $1.key }.map(\.value)
    }
    for continuation in targets {
      for event in events { continuation.yield(event) }
    }
  }

  func finish() {
    let finished = state.withLock { state in
      state.isFinished = true
      defer { state.continuations.removeAll() }
      return Array(state.continuations.values)
    }
    for continuation in finished { continuation.finish() }
  }
}
