// libFuzzer entry point for the codec of the lines waymarkd sends to its clients
// (`DaemonMessage.parse`, read by every `DaemonLocationService`, and `DaemonMessage.line`, what
// the daemon writes): any bytes give a message or a typed error, and a message written again
// reads back as itself, byte for byte. Built by `Fuzz/run-broker.sh <runs> messages`; not part
// of the package.
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
    // The round trip: what decodes is written as the daemon writes it, and that line decodes
    // to a message written the same again (an unknown class is kept as its raw line).
    if case .unknown = message { break }
    let written = message.line
    precondition(written.last == 0x0A && !written.dropLast().contains(0x0A), "not one line")
    guard
      case .success(let reread) = DaemonMessage.parse(
        String(decoding: written.dropLast(), as: UTF8.self))
    else { preconditionFailure("a written \(message.className) does not decode") }
    precondition(reread.line == written, "\(message.className) is not written the same again")
  case .failure(let error):
    precondition(!error.message.isEmpty)
  }
  return 0
}
