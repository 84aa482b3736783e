import Glibc
import NMEA
import WaymarkCore

/// One log of `waymark replay`, opened: its descriptor, its reader and, when a fleet worker
/// decodes it ahead of the pipeline, the read-ahead that worker fills.
final class ReplayLog: Sendable {
  /// The path as given on the command line (`-` for standard input).
  let path: String
  /// The path as messages and provenance name it (`<stdin>` for `-`).
  let displayPath: String
  /// The log's size in bytes when it is a regular file, else 0.
  let fileSize: Int
  /// The reader of the log; read by one thread at a time.
  let reader: NMEALogReader
  /// The decoded batches when a fleet worker reads the log, `nil` when the replay reads it.
  let readAhead: NMEAReadAhead?
  private let descriptor: Int32

  /// Opens the log at `path` (`-`: standard input).
  ///
  /// - Parameters:
  ///   - readAhead: the read-ahead a fleet worker will fill, or `nil`.
  /// - Throws: ``CommandError`` (66) when the log cannot be opened or is a directory.
  init(
    path: String, defaultDate: UTCDate?, strict: Bool, readAhead: NMEAReadAhead? = nil
  ) throws {
    let descriptor: Int32 = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw CommandError(
        "cannot read '\(path)': \(String(cString: strerror(errno)))", code: .noInput)
    }
    var status = stat()
    if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
      if descriptor > 0 { close(descriptor) }
      throw CommandError("cannot read '\(path)': Is a directory", code: .noInput)
    }
    let displayPath = path == "-" ? "<stdin>" : path
    self.path = path
    self.descriptor = descriptor
    self.displayPath = displayPath
    fileSize = (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : 0
    reader = NMEALogReader(
      descriptor: descriptor, path: displayPath, defaultDate: defaultDate, strict: strict)
    self.readAhead = readAhead
  }

  deinit {
    if descriptor > 0 { close(descriptor) }
  }

  /// The error of a failed `read(2)` as the replay reports it (exit 74).
  static func commandError(_ error: NMEALogReader.ReadError) -> CommandError {
    CommandError(error.description, code: .ioError)
  }
}
