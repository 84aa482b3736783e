// libFuzzer entry point for the request parser of waymarkd's socket (every line a client
// sends goes through it). Built by Fuzz/run-broker.sh; not part of the package.
import Waymark
import WaymarkBroker
import WaymarkCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBrokerRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let line = UnsafeBufferPointer(start: data, count: size)
  let result = BrokerRequest.parse(line)
  // Deterministic: the same bytes give the same answer.
  precondition(BrokerRequest.parse(Array(line)) == result)
  switch result {
  case .success(let request):
    precondition(size <= BrokerRequest.maximumLineLength, "an overlong line was accepted")
    switch request {
    case .watch(let options):
      if let distance = options.distanceMeters {
        precondition(distance.isFinite && distance > 0)
      }
    case .answer(let id, _):
      precondition(id >= 0)
    case .unwatch, .poll, .status, .request, .agent:
      break
    }
  case .failure(let error):
    // The answer never echoes a large part of the client's line back.
    precondition(!error.message.isEmpty && error.message.utf8.count <= 200, error.message)
  }
  return 0
}
