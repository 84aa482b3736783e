import FoundationEssentials
import Glibc

/// A buffered writer to a file descriptor. Machine output goes through it in large writes.
///
/// Not thread-safe: one sink per writer.
package final class OutputSink {
  private let descriptor: Int32
  private var buffer: [UInt8] = []
  private let capacity: Int
  /// Whether the descriptor is a terminal.
  package let isTerminal: Bool

  /// Creates a sink on `descriptor` that flushes when `capacity` bytes are buffered.
  package init(descriptor: Int32, capacity: Int = 1 << 16) {
    self.descriptor = descriptor
    self.capacity = capacity
    self.isTerminal = isatty(descriptor) == 1
    buffer.reserveCapacity(capacity)
  }

  /// Standard output.
  nonisolated(unsafe) package static let standardOutput = OutputSink(descriptor: 1)
  /// Standard error, flushed after every line.
  nonisolated(unsafe) package static let standardError = OutputSink(descriptor: 2, capacity: 0)

  /// Appends bytes; writes them out when the buffer is full.
  package func write(_ bytes: [UInt8]) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= capacity { flush() }
  }

  /// Appends a string.
  package func write(_ string: String) {
    write(Array(string.utf8))
  }

  /// Appends a string and a newline.
  package func line(_ string: String) {
    write(string + "\n")
  }

  /// Gives callers direct access to the buffer, to append without copies; flushes when full.
  package func withBuffer(_ body: (inout [UInt8]) -> Void) {
    body(&buffer)
    if buffer.count >= capacity { flush() }
  }

  /// The `errno` of the first failed write, or `nil` while every write succeeded.
  package private(set) var writeError: Int32?

  /// Writes out everything buffered. Errors other than EINTR drop the rest (EPIPE: the reader
  /// has gone, and SIGPIPE is ignored by the CLI) and are kept in ``writeError``.
  package func flush() {
    var offset = 0
    buffer.withUnsafeBytes { raw in
      while offset < raw.count {
        let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          if writeError == nil { writeError = errno }
          return
        }
        offset += written
      }
    }
    buffer.removeAll(keepingCapacity: true)
  }
}
