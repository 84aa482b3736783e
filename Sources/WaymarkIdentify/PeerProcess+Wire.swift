extension PeerProcess {
  /// A successful answer on the wire: `0`, uid (4 bytes), pid (4 bytes), start time (8 bytes),
  /// each little-endian, then the executable's path (its bytes, the rest of the message).
  package var wire: [UInt8] {
    var bytes: [UInt8] = [0]
    bytes.reserveCapacity(17 + executable.utf8.count)
    withUnsafeBytes(of: uid.littleEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: pid.littleEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: startTime.littleEndian) { bytes.append(contentsOf: $0) }
    bytes.append(contentsOf: executable.utf8)
    return bytes
  }

  /// A failed answer on the wire: `1`, then the reason's text.
  package static func failureWire(_ failure: IdentifyFailure) -> [UInt8] {
    [1] + Array(failure.description.utf8.prefix(1024))
  }

  /// Reads an answer: the process, or the failure it carries.
  ///
  /// - Throws: ``IdentifyFailure`` with the helper's reason, or when the message is malformed.
  package static func decode(_ bytes: [UInt8]) throws(IdentifyFailure) -> PeerProcess {
    guard let status = bytes.first else { throw IdentifyFailure("empty answer from the helper") }
    guard status == 0 else {
      guard status == 1 else { throw IdentifyFailure("malformed answer from the helper") }
      throw IdentifyFailure(String(decoding: bytes.dropFirst(), as: UTF8.self))
    }
    guard bytes.count > 17 else { throw IdentifyFailure("short answer from the helper") }
    func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
      var value = T.zero
      for index in 0..<MemoryLayout<T>.size {
        value |= T(truncatingIfNeeded: bytes[offset + index]) << (8 * index)
      }
      return value
    }
    return PeerProcess(
      uid: integer(UInt32.self, at: 1), pid: integer(Int32.self, at: 5),
      startTime: integer(UInt64.self, at: 9),
      executable: String(decoding: bytes[17...], as: UTF8.self))
  }
}
