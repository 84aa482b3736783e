import Glibc

/// The home directory of the user running the process, without Foundation.
public enum HomeDirectory {
  /// `$HOME` when it is set and not empty; otherwise the user's entry in the password database;
  /// otherwise `/`.
  public static func resolve(environment: [String: String]) -> String {
    if let home = environment["HOME"], !home.isEmpty { return home }
    return passwordDatabaseEntry() ?? "/"
  }

  private static func passwordDatabaseEntry() -> String? {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    let status = getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result)
    guard status == 0, result != nil, let directory = entry.pw_dir else { return nil }
    let path = String(cString: directory)
    return path.isEmpty ? nil : path
  }
}
