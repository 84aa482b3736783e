// libFuzzer entry point for the request decoder of waymarkd's socket (`DaemonRequest.decode`:
// every line a client sends goes through it). Built by Fuzz/run-broker.sh; not part of the package.
import Waymark
import WaymarkBroker
import WaymarkCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBrokerRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let line = UnsafeBufferPointer(start: data, count: size)
  let result = DaemonRequest.decode(line)
  // Deterministic: the same bytes give the same answer.
  precondition(DaemonRequest.decode(Array(line)) == result)
  switch result {
  case .success(let request):
    precondition(size <= DaemonRequest.maximumLineLength, "an overlong line was accepted")
    switch request {
    case .watch(let options):
      if let distance = options.distanceMeters {
        precondition(distance.isFinite && distance > 0)
      }
    case .answer(let id, _):
      precondition(id >= 0)
    case .session(let options):
      // The purpose reaches an agent's question: bounded, whatever the line held.
      if let purpose = options.purpose {
        precondition(purpose.unicodeScalars.count <= DaemonRequest.SessionOptions.maximumPurposeLength)
      }
    case .monitor(let name, let operation):
      precondition(!name.isEmpty && name.utf8.count <= HeldMonitor.maximumNameBytes)
      switch operation {
      case .add(let conditions):
        precondition((1...HeldMonitor.maximumConditions).contains(conditions.count))
        for condition in conditions {
          precondition(
            !condition.identifier.isEmpty
              && condition.identifier.utf8.count <= HeldMonitor.maximumNameBytes)
        }
      case .remove(let identifiers):
        precondition((1...HeldMonitor.maximumConditions).contains(identifiers.count))
      case .events(let after):
        precondition(after >= 0)
      case .acknowledge(let through):
        precondition(through >= 0)
      case .delete:
        break
      }
    case .unwatch, .poll, .status, .request, .endSession, .agent:
      break
    }
  case .failure(let error):
    // The answer never echoes a large part of the client's line back.
    precondition(!error.message.isEmpty && error.message.utf8.count <= 200, error.message)
  }
  return 0
}
