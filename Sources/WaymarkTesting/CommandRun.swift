import Foundation
import WaymarkCore
import WaymarkProcess

/// The result of running a program to completion.
public struct CommandRun: Sendable {
  /// Exit status (or 128 + signal number when killed by a signal).
  public var status: Int32
  /// Everything written to standard output.
  public var stdout: Data
  /// Everything written to standard error, as text.
  public var stderr: String

  /// Standard output as text.
  public var output: String { String(decoding: stdout, as: UTF8.self) }

  /// Signals a child starts with at their default disposition, whatever the test process does
  /// with them.
  static let defaultSignals = [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT]

  /// Runs `executable` with `arguments` and waits for it; standard input is empty unless given.
  ///
  /// Started through ``ProcessSpawner`` (`posix_spawn(3)`) with its three standard streams on
  /// pipes, read and written on threads of their own so that a full pipe never blocks the child.
  ///
  /// - Parameters:
  ///   - executable: the program's path.
  ///   - arguments: its arguments (without the program's name).
  ///   - input: its standard input; empty when `nil`.
  ///   - environment: its whole environment; this process's when `nil`.
  ///   - currentDirectory: its working directory; this process's when `nil`.
  /// - Throws: ``ProcessSpawner/SpawnError`` when it cannot be started.
  public static func run(
    _ executable: String, _ arguments: [String], input: Data? = nil,
    environment: [String: String]? = nil, currentDirectory: URL? = nil
  ) throws -> CommandRun {
    var options = ProcessSpawner.Options()
    options.standardInput = .pipe
    options.standardOutput = .pipe
    options.standardError = .pipe
    options.defaultSignals = defaultSignals
    options.workingDirectory = currentDirectory?.path
    let child = try ProcessSpawner.spawn(
      [executable] + arguments,
      environment: environment ?? ProcessInfo.processInfo.environment, options: options)
    let errorData = BlockingQueue<[UInt8]>(capacity: 1)
    let errorPipe = child.standardError!
    DetachedThread.start(name: "command-stderr") { errorData.push(readAll(errorPipe)) }
    let inputPipe = child.standardInput!
    let bytes = input.map { [UInt8]($0) } ?? []
    DetachedThread.start(name: "command-stdin") { writeAll(bytes, to: inputPipe) }
    let outputBytes = readAll(child.standardOutput!)
    let errorBytes = errorData.pop()
    return CommandRun(
      status: ProcessSpawner.waitForExit(child.processID), stdout: Data(outputBytes),
      stderr: String(decoding: errorBytes, as: UTF8.self))
  }

  /// Runs the package's `waymark` executable.
  public static func waymark(
    _ arguments: [String], input: Data? = nil, environment: [String: String]? = nil
  ) throws -> CommandRun {
    try run(Products.executable("waymark"), arguments, input: input, environment: environment)
  }

  /// Reads `descriptor` to its end, then closes it.
  static func readAll(_ descriptor: Int32) -> [UInt8] {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = read(descriptor, &buffer, buffer.count)
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      data += buffer[0..<count]
    }
    close(descriptor)
    return data
  }

  /// Writes `bytes` to `descriptor` (a child's standard input), then closes it. `SIGPIPE` is
  /// blocked on this thread: a child that exits without reading ends the write with `EPIPE`,
  /// not the test process.
  static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    var mask = sigset_t()
    sigemptyset(&mask)
    sigaddset(&mask, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &mask, nil)
    var offset = 0
    while offset < bytes.count {
      let count = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      offset += count
    }
    close(descriptor)
  }
}
