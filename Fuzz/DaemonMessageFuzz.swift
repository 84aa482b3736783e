// libFuzzer entry point for the decoder of the lines waymarkd sends to its clients
// (`DaemonMessage.parse`, read by every `DaemonLocationService`). Built by
// `Fuzz/run-broker.sh <runs> messages`; not part of the package.
import WaymarkBroker
import WaymarkCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDaemonMessage(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  let result = DaemonMessage.parse(line)
  // Deterministic: the same line gives the same answer.
  precondition(DaemonMessage.parse(line) == result)
  switch result {
  case .success(let message):
    switch message {
    case .location(let fix):
      precondition(fix.isUsable, "an unusable fix was accepted")
    case .unknown(_, let raw):
      precondition(raw == line, "an unknown class lost its line")
    case .placeEvent(let event):
      precondition(event.className == "ARRIVAL" || event.className == "DEPARTURE")
    default:
      break
    }
  case .failure(let error):
    precondition(!error.message.isEmpty)
  }
  return 0
}
