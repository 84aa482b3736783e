/// Writes a snapshot's fields one after another in this machine's byte order, as
/// ``SnapshotReader`` reads them back (a marker in the header tells a reader of the other
/// byte order to refuse them).
struct SnapshotWriter {
  /// What has been written.
  private(set) var bytes: [UInt8] = []

  /// Makes room for about `count` bytes.
  mutating func reserve(_ count: Int) { bytes.reserveCapacity(count) }

  /// Appends `value`'s bytes (a trivial type: an integer or a `Double`).
  mutating func write<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
  }

  /// Appends `value`'s bit pattern.
  mutating func write(_ value: Double) { write(value.bitPattern) }

  /// Appends the element count, then the elements' bytes.
  mutating func write<T: FixedWidthInteger>(array: [T]) {
    write(UInt64(array.count))
    array.withUnsafeBytes { bytes.append(contentsOf: $0) }
  }

  /// Appends the element count, then the elements' bit patterns.
  mutating func write(array: [Double]) {
    write(UInt64(array.count))
    array.withUnsafeBytes { bytes.append(contentsOf: $0) }
  }

  /// Overwrites the 8 bytes at `offset` with `value` (a header field known only at the end).
  mutating func patch(_ value: UInt64, at offset: Int) {
    withUnsafeBytes(of: value) { raw in
      for index in 0..<8 { bytes[offset + index] = raw[index] }
    }
  }
}
