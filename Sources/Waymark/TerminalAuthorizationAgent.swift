import FoundationEssentials
import Glibc
import WaymarkCore

/// An agent that asks the person at a terminal.
///
/// It writes a prompt to `output` and reads one line from `input` (both usually the process's
/// terminal; ``isInteractive`` tells whether they are TTYs). Answers:
///
/// | Typed | Answer |
/// |---|---|
/// | `o` | allow once (this process only) |
/// | `w` | allow while in use |
/// | `a` | allow always (offered for `always` requests) |
/// | `d` or `n` | don't allow |
///
/// Adding `r` (for example `wr`) asks for reduced (approximate) accuracy. An unknown answer is
/// asked again, up to three times; end of input or a read error is a refusal. The blocking read
/// runs on a thread of its own, never on the concurrency pool.
public struct TerminalAuthorizationAgent: AuthorizationAgent {
  /// File descriptor the answer is read from.
  public let input: Int32
  /// File descriptor the prompt is written to.
  public let output: Int32

  /// Creates an agent on `input` and `output` (standard input and output by default).
  public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
    self.input = input
    self.output = output
  }

  /// Whether both descriptors are terminals.
  public var isInteractive: Bool { isatty(input) == 1 && isatty(output) == 1 }

  /// The prompt shown for `request`.
  public static func prompt(for request: AuthorizationRequest) -> String {
    let what = request.level == .always ? "at any time, also in the background" : "while in use"
    var text = "Allow \"\(request.clientID)\" to use your location \(what)?\n"
    if let purpose = request.purpose { text += "  \(LogText.escaped(purpose))\n" }
    text += "  [o] Allow once  [w] Allow while using"
    if request.level == .always { text += "  [a] Allow always" }
    text += "  [d] Don't allow\n  Add 'r' for approximate location only (for example 'wr').\n"
    text += "Choice: "
    return text
  }

  /// Parses a typed answer for `request`; `nil` when it is not one of the choices.
  public static func parse(_ line: String, for request: AuthorizationRequest)
    -> AuthorizationAnswer?
  {
    var word = line.trimmedWhitespace.lowercased()
    var accuracy = AccuracyAuthorization.full
    if word.count == 2, word.hasSuffix("r") {
      accuracy = .reduced
      word.removeLast()
    }
    switch word {
    case "o": return .allowOnce(accuracy)
    case "w": return .allow(.whenInUse, accuracy)
    case "a" where request.level == .always: return .allow(.always, accuracy)
    case "d", "n": return .deny
    default: return nil
    }
  }

  public func decide(_ request: AuthorizationRequest) async -> AuthorizationAnswer {
    let input = input
    let output = output
    return await withCheckedContinuation { continuation in
      DetachedThread.start(name: "waymark-auth") {
        continuation.resume(returning: Self.ask(request, input: input, output: output))
      }
    }
  }

  private static func ask(_ request: AuthorizationRequest, input: Int32, output: Int32)
    -> AuthorizationAnswer
  {
    for _ in 0..<3 {
      write(prompt(for: request), to: output)
      guard let line = readLine(from: input) else {
        write("\n", to: output)
        return .deny
      }
      if let answer = parse(line, for: request) { return answer }
      write("Please answer with one of the letters in brackets.\n", to: output)
    }
    return .deny
  }

  private static func write(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        return
      }
      bytes = bytes.dropFirst(written)
    }
  }

  /// Reads bytes up to a newline; `nil` at end of input with nothing read, or on error.
  private static func readLine(from descriptor: Int32) -> String? {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      let count = Glibc.read(descriptor, &byte, 1)
      if count < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if count == 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
      if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
      line.append(byte)
      if line.count > 1024 { return String(decoding: line, as: UTF8.self) }
    }
  }
}

/// The agent a process uses by default: the terminal when standard input and output are
/// terminals, otherwise a deny-by-default policy.
public enum DefaultAuthorizationAgent {
  /// Chooses the agent for this process.
  public static func make() -> any AuthorizationAgent {
    let terminal = TerminalAuthorizationAgent()
    return terminal.isInteractive ? terminal : PolicyAuthorizationAgent()
  }
}
