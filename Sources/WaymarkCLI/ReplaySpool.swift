import Glibc
import WaymarkProcess

/// What one log of a parallel fleet replay prints, held in an unlinked temporary file until the
/// logs before it have printed theirs: the fleet's standard output and error are then those of
/// replaying the logs one by one, in the order given, however the devices' pipelines overlap.
final class ReplaySpool {
  /// The log's standard output.
  let output: OutputSink
  /// The log's standard error (its summary, its error).
  let errors: OutputSink
  private let outputFile: UnsafeMutablePointer<FILE>?
  private let errorFile: UnsafeMutablePointer<FILE>?

  /// Creates the two temporary files (`tmpfile(3)`: unlinked files in `/tmp`, gone when
  /// closed); `nil` when they cannot be created.
  init?() {
    guard let outputFile = tmpfile() else { return nil }
    guard let errorFile = tmpfile() else {
      fclose(outputFile)
      return nil
    }
    self.outputFile = outputFile
    self.errorFile = errorFile
    output = OutputSink(descriptor: fileno(outputFile))
    errors = OutputSink(descriptor: fileno(errorFile), capacity: 0)
  }

  deinit {
    fclose(outputFile)
    fclose(errorFile)
  }

  /// Copies what was held to `output` and `errors` (the process's), output first.
  func release(output: OutputSink, errors: OutputSink) {
    self.output.flush()
    Self.copy(fileno(outputFile), to: output)
    Self.copy(fileno(errorFile), to: errors)
  }

  private static func copy(_ descriptor: Int32, to sink: OutputSink) {
    guard lseek(descriptor, 0, SEEK_SET) == 0 else { return }
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      sink.write(Array(chunk[0..<count]))
    }
    sink.flush()
  }
}
