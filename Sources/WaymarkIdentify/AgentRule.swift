import Glibc

/// A program the operator allows to be an agent (`agents = …` in waymark.conf): a client id
/// `<user>:<exe>`, where the user may be `*` (any user). Only a peer matching a rule may send
/// `AGENT`; any other gets an `ERROR`. A value of the configuration, here so that what reads
/// waymark.conf needs no broker; the broker matches it against a peer (`matches(_:)`).
package struct AgentRule: Sendable, Hashable, CustomStringConvertible {
  /// The user name (or uid in decimal), or `nil` for any user.
  package var user: String?
  /// The real path of the agent's executable.
  package var executable: String

  /// A rule for `executable` run by `user` (`nil`: any user).
  package init(user: String?, executable: String) {
    self.user = user
    self.executable = executable
  }

  /// Parses `<user>:<exe>` or `*:<exe>`; `nil` when it is not one (the path must be absolute).
  package init?(parsing text: String) {
    guard let colon = text.firstIndex(of: ":") else { return nil }
    let user = String(text[..<colon])
    let executable = String(text[text.index(after: colon)...])
    guard !user.isEmpty, executable.hasPrefix("/"),
      !text.contains(where: { $0.isWhitespace || $0 == "," })
    else { return nil }
    self.init(user: user == "*" ? nil : user, executable: executable)
  }

  package var description: String { "\(user ?? "*"):\(executable)" }

  /// The default: `waymark` installed next to the running executable (`waymarkd`), for any user
  /// (`*:/usr/bin/waymark` for a packaged daemon).
  package static func installedWaymark() -> [AgentRule] {
    guard let resolved = realpath("/proc/self/exe", nil) else { return [] }
    defer { free(resolved) }
    var directory = String(cString: resolved)
    guard let slash = directory.lastIndex(of: "/") else { return [] }
    directory = String(directory[..<slash])
    let candidate = directory + "/waymark"
    guard let real = realpath(candidate, nil) else {
      return [AgentRule(user: nil, executable: candidate)]
    }
    defer { free(real) }
    return [AgentRule(user: nil, executable: String(cString: real))]
  }
}
