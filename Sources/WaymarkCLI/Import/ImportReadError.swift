import Glibc

/// A failed `read(2)` of an imported file.
struct ImportReadError: Error {
  /// The `errno`.
  var code: Int32

  /// Reads the open file `descriptor` to its end, a megabyte at a time, calling `body` with
  /// each chunk (the one read loop of the import's readers).
  ///
  /// - Throws: the `errno` of a failed `read(2)` (`EINTR` is retried).
  static func readChunks(
    _ descriptor: Int32, _ body: (ArraySlice<UInt8>) -> Void
  ) throws(ImportReadError) {
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw ImportReadError(code: errno)
      }
      if count == 0 { return }
      body(chunk[0..<count])
    }
  }
}
