import Foundation
import WaymarkCore

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

  /// Runs `executable` with `arguments` and waits for it; standard input is empty unless given.
  public static func run(
    _ executable: String, _ arguments: [String], input: Data? = nil,
    environment: [String: String]? = nil, currentDirectory: URL? = nil
  ) throws -> CommandRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    let stdout = Pipe()
    let stderr = Pipe()
    let stdin = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    process.standardInput = stdin
    try process.run()
    // Read both pipes concurrently so that a full pipe never blocks the child.
    let errorData = BlockingQueue<Data>(capacity: 1)
    let errorReader = Thread { errorData.push(stderr.fileHandleForReading.readDataToEndOfFile()) }
    errorReader.start()
    if let input { stdin.fileHandleForWriting.write(input) }
    try? stdin.fileHandleForWriting.close()
    let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let errorBytes = errorData.pop()
    let status =
      process.terminationReason == .uncaughtSignal
      ? 128 + process.terminationStatus : process.terminationStatus
    return CommandRun(
      status: status, stdout: outputData, stderr: String(decoding: errorBytes, as: UTF8.self))
  }

  /// Runs the package's `waymark` executable.
  public static func waymark(
    _ arguments: [String], input: Data? = nil, environment: [String: String]? = nil
  ) throws -> CommandRun {
    try run(Products.executable("waymark"), arguments, input: input, environment: environment)
  }
}
