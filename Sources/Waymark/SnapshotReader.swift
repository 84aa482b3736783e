/// Reads back what a ``SnapshotWriter`` wrote, never past the end of its bytes: every read
/// returns `nil` when the bytes run out or a count is implausible, so that truncated or
/// garbled bytes are refused rather than trusted.
struct SnapshotReader {
  private let bytes: UnsafeRawBufferPointer
  /// The offset of the next read.
  private(set) var offset = 0

  /// Reads `bytes` from the start (valid as long as the reader is used).
  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  /// Bytes left to read.
  var remaining: Int { bytes.count - offset }

  /// The next `T`, or `nil` past the end.
  mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) -> T? {
    let size = MemoryLayout<T>.size
    guard remaining >= size else { return nil }
    let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
    offset += size
    return value
  }

  /// The next `Double`, or `nil` past the end.
  mutating func readDouble() -> Double? { read(UInt64.self).map(Double.init(bitPattern:)) }

  /// The next count, or `nil` when it is past the end or more than `limit`.
  mutating func readCount(limit: Int) -> Int? {
    guard let count = read(UInt64.self), count <= UInt64(max(0, limit)) else { return nil }
    return Int(count)
  }

  /// The next array of `T` (count, then elements), or `nil` when it runs past the end.
  mutating func readArray<T: FixedWidthInteger>(_: T.Type = T.self) -> [T]? {
    let size = MemoryLayout<T>.stride
    guard let count = readCount(limit: remaining / size) else { return nil }
    return copy(count: count, size: size)
  }

  /// The next array of `Double`s (count, then bit patterns), or `nil` when it runs past the
  /// end.
  mutating func readDoubleArray() -> [Double]? {
    let size = MemoryLayout<Double>.stride
    guard let count = readCount(limit: remaining / size) else { return nil }
    return copy(count: count, size: size)
  }

  /// Copies `count` elements of `size` bytes from the current offset (checked by the caller).
  private mutating func copy<T>(count: Int, size: Int) -> [T] {
    let start = offset
    offset += count * size
    return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
      if count > 0, let base = bytes.baseAddress, let target = buffer.baseAddress {
        UnsafeMutableRawPointer(target).copyMemory(from: base + start, byteCount: count * size)
      }
      initialized = count
    }
  }
}
