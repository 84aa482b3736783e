// libFuzzer entry point for the reader of a monitor's saved state (`MonitorState.Saved`: a
// `Monitor`'s file, a held monitor's state in waymarkd's store) and of one place's state
// (`PlaceMonitor.State`, waymarkd's place states). Built by Fuzz/run-parsers.sh monitor; not part
// of the package.
import FoundationEssentials
import Waymark
import WaymarkCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMonitorState(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let result = Result { () throws(JSONObjectReader.Mismatch) in
    try MonitorState.Saved(jsonText: bytes)
  }
  // Deterministic: the same bytes give the same answer.
  let again = Result { () throws(JSONObjectReader.Mismatch) in
    try MonitorState.Saved(jsonText: bytes)
  }
  switch (result, again) {
  case (.failure(let mismatch), .failure(let second)):
    // A refusal always says what was expected.
    precondition(mismatch == second, "two readings of the same bytes differ")
    precondition(!mismatch.expected.isEmpty && !mismatch.description.isEmpty)
  case (.success(let saved), .success(let second)):
    precondition(same(saved, second), "two readings of the same bytes differ")
    // What is written reads back as the same state, and writes again byte for byte.
    let written = saved.json
    precondition(!written.hasNonFiniteNumber, "a number read is not finite")
    let reread: MonitorState.Saved
    do {
      reread = try MonitorState.Saved(jsonText: written.closed)
    } catch {
      preconditionFailure("a written state does not read back: \(error)")
    }
    precondition(same(reread, saved), "writing changed the state")
    precondition(reread.json.closed == written.closed, "a second write differs")
  default:
    preconditionFailure("two readings of the same bytes differ")
  }
  // One place's state, as waymarkd keeps it.
  if let state = try? PlaceMonitor.State(json: JSONObjectReader(parsing: bytes)) {
    let written = state.json.closed
    let reread = try? PlaceMonitor.State(json: JSONObjectReader(parsing: written))
    precondition(reread == state, "a written place state does not read back the same")
  }
  return 0
}

private func same(_ a: MonitorState.Saved, _ b: MonitorState.Saved) -> Bool {
  a.version == b.version && a.cursor == b.cursor && a.entries == b.entries && a.engine == b.engine
}
