import FoundationEssentials
import WaymarkCore

// One-shot requests: `requestLocation(timeout:)` and the requests it leaves waiting.
extension LocationManager {
  /// One location at ``desiredAccuracy``.
  ///
  /// Starts the source if needed (and stops it afterwards unless updates are on). Locations for
  /// the request pass ``maximumHorizontalAccuracy`` and the reduced-accuracy grid, but not the
  /// distance filter nor the rate limit.
  ///
  /// - Parameter timeout: how long to wait on the manager's clock.
  /// - Returns: the first location at the desired accuracy.
  /// - Throws: ``LocationError/notAuthorized(_:)``, ``LocationError/timedOut(bestSeen:)`` (with
  ///   the most accurate location seen), ``LocationError/sourceEnded(bestSeen:)``, or
  ///   `CancellationError`.
  public func requestLocation(timeout: Duration) async throws -> Location {
    let status = authorizationStatus
    guard status.isAuthorized else {
      let error = LocationError.notAuthorized(status)
      emitFailure(error)
      throw error
    }
    let id = makeID()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let clock = clock
        let timeoutTask = Task { [weak self] in
          do { try await clock.sleep(for: timeout) } catch { return }
          self?.finishOneShot(id)
        }
        let cancelled = withState { state -> Bool in
          if Task.isCancelled { return true }
          state.oneShots[id] = OneShot(
            continuation: continuation, accuracy: state.delivery.desiredAccuracy,
            timeout: timeoutTask)
          reconcile(&state)
          return false
        }
        if cancelled {
          timeoutTask.cancel()
          continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      cancelOneShot(id)
    }
  }

  static func isBetter(_ location: Location, than other: Location?) -> Bool {
    guard let other else { return true }
    guard let accuracy = location.horizontalAccuracy else { return false }
    guard let otherAccuracy = other.horizontalAccuracy else { return true }
    return accuracy < otherAccuracy
  }

  /// Removes the one-shot request `id` (a timeout and a cancellation may race; one finds it).
  func takeOneShot(_ id: Int) -> OneShot? {
    withState { state -> OneShot? in
      guard let oneShot = state.oneShots.removeValue(forKey: id) else { return nil }
      reconcile(&state)
      return oneShot
    }
  }

  /// Ends the one-shot request `id` with its timeout error.
  func finishOneShot(_ id: Int) {
    guard let oneShot = takeOneShot(id) else { return }
    let error = LocationError.timedOut(bestSeen: oneShot.bestSeen)
    emitFailure(error)
    oneShot.continuation.resume(throwing: error)
  }

  func cancelOneShot(_ id: Int) {
    let oneShot = takeOneShot(id)
    oneShot?.timeout?.cancel()
    oneShot?.continuation.resume(throwing: CancellationError())
  }
}
