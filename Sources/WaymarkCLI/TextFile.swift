import Glibc

/// Writing a command's whole output to a file named on the command line (`--output`).
enum TextFile {
  /// Writes `text` to the file `path`, or to standard output for `-`.
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
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw CommandError(
        "cannot write '\(path)': \(String(cString: strerror(errno)))", code: .ioError)
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
