import Glibc
import WaymarkCore
import WaymarkProcess

/// Starting a helper program (gpsd, waymarkd under test) whose stderr the caller reads line by
/// line: stdin and stdout on /dev/null, stderr on a pipe, the signal mask cleared (a test
/// process may block signals the child must receive).
package enum ChildProcess {
  /// Why a child could not be started.
  package typealias SpawnError = ProcessSpawner.SpawnError

  /// Starts `arguments[0]` (a path) with `arguments` as its argv and exactly `environment`
  /// (through ``ProcessSpawner``).
  ///
  /// - Returns: The child's pid and the read end of its stderr pipe (close-on-exec; the caller
  ///   owns it and must reap the child).
  /// - Throws: ``SpawnError`` when the pipe or `posix_spawn` fails.
  package static func startWithStderrPipe(
    _ arguments: [String], environment: [String: String]
  ) throws(SpawnError) -> (processID: pid_t, stderr: Int32) {
    var options = ProcessSpawner.Options()
    options.standardError = .pipe
    let child = try ProcessSpawner.spawn(arguments, environment: environment, options: options)
    return (child.processID, child.standardError!)
  }

  /// Reads `descriptor` (a child's stderr pipe) on a new thread until end of file, calling
  /// `body` with each complete line without its newline, then closes it.
  package static func readLines(
    from descriptor: Int32, threadName: String, _ body: @escaping @Sendable (String) -> Void
  ) {
    DetachedThread.start(name: threadName) {
      var pending: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        pending += buffer[0..<count]
        while let newline = pending.firstIndex(of: 10) {
          body(String(decoding: pending[..<newline], as: UTF8.self))
          pending.removeSubrange(...newline)
        }
      }
      close(descriptor)
    }
  }
}
