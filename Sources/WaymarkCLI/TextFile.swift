import Glibc

/// Writing a command's whole output to a file named on the command line (`--output`).
enum TextFile {
  /// Writes `text` to the file `path`, or to standard output for `-`. The file holds positions
  /// (a map, a synthesized log): a new one is created 0600, and a path whose last component is
  /// a symbolic link is refused (`O_NOFOLLOW`), so that a link planted where root writes cannot
  /// send the output (or the truncation) elsewhere.
  static func write(_ text: String, to path: String) throws {
    if path == "-" {
      let sink = OutputSink.standardOutput
      sink.write(text)
      sink.flush()
      if let code = sink.writeError, code != EPIPE {
        throw CommandError(
          "cannot write the output: \(String(cString: strerror(code)))", code: .ioError)
      }
      return
    }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
      let reason = errno == ELOOP ? "it is a symbolic link" : String(cString: strerror(errno))
      throw CommandError("cannot write '\(path)': \(reason)", code: .ioError)
    }
    defer { close(descriptor) }
    let sink = OutputSink(descriptor: descriptor)
    sink.write(text)
    sink.flush()
    if let code = sink.writeError {
      throw CommandError(
        "cannot write '\(path)': \(String(cString: strerror(code)))", code: .ioError)
    }
  }
}
