import Glibc

/// A file of `/proc`, read whole.
package enum ProcFile {
  /// The whole of the file at `path`, read to its end (a `/proc` file's size is 0, and one read
  /// returns a page or so); `nil` when it cannot be opened.
  package static func contents(of path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
