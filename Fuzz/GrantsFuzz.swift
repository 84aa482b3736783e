// libFuzzer entry point for the grants file reader (`FileGrantStore`, grants.json). Built by
// Fuzz/run-parsers.sh grants; not part of the package.
import FoundationEssentials
import WaymarkCore

private let path = "/fuzz/grants.json"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGrants(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Data(UnsafeBufferPointer(start: data, count: size))
  let result = Result { () throws(GrantStoreError) in try FileGrantStore.decode(bytes, path: path) }
  // Deterministic: the same bytes give the same answer.
  let again = Result { () throws(GrantStoreError) in try FileGrantStore.decode(bytes, path: path) }
  precondition(again == result, "two decodings of the same bytes differ")
  switch result {
  case .failure(let error):
    // Reading never reports a write failure, and always names the file.
    guard case .corrupt(let named, let reason) = error else {
      preconditionFailure("decoding gave \(error)")
    }
    precondition(named == path && !reason.isEmpty && "\(error)".contains(path))
  case .success(let grants):
    for (client, grant) in grants {
      precondition(!client.isEmpty && client == grant.clientID, "a grant under another key")
      precondition(grant.grantedAt.timeIntervalSince1970.isFinite, "a time that is not finite")
    }
    // What the store writes reads back as the same grants (times to the millisecond), and
    // writing that again gives the same bytes.
    let written = FileGrantStore.encode(grants.values)
    let reread: [String: Grant]
    do {
      reread = try FileGrantStore.decode(written, path: path)
    } catch {
      preconditionFailure("a written grants file does not read back: \(error)")
    }
    precondition(Set(reread.keys) == Set(grants.keys), "writing lost or added clients")
    for (client, grant) in grants {
      let copy = reread[client]!
      precondition(copy.level == grant.level && copy.accuracy == grant.accuracy)
      let shift = abs(copy.grantedAt.timeIntervalSince(grant.grantedAt))
      precondition(shift < 0.001, "grantedAt moved by \(shift) s")
    }
    precondition(FileGrantStore.encode(reread.values) == written, "a second write differs")
  }
  return 0
}
