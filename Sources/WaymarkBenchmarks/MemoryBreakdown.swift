import Foundation
import WaymarkProcess

/// What a process's resident memory is, mapping by mapping (`/proc/<pid>/smaps`): the
/// executable's code, its read-only and writable data, each shared library, the heap (the
/// `[heap]` and malloc's anonymous arenas), the thread stacks, and the rest.
///
/// A thread's stack is the mapping that holds the stack pointer `/proc/<pid>/task/<tid>/syscall`
/// reports for it (every idle thread is blocked in a system call); the main thread's is
/// `[stack]`. The rest of the anonymous private memory counts as heap. SQLite's page cache is
/// heap and cannot be told apart from outside the process.
struct MemoryBreakdown {
  /// One row: kilobytes resident, proportional and anonymous.
  struct Amount {
    var rss = 0
    var pss = 0
    var anonymous = 0

    static func += (lhs: inout Amount, rhs: Amount) {
      lhs.rss += rhs.rss
      lhs.pss += rhs.pss
      lhs.anonymous += rhs.anonymous
    }
  }

  /// The rows in the order they print, with their kilobytes.
  private(set) var rows: [(name: String, amount: Amount)] = []
  /// Threads found (their stacks are the `thread stacks` row).
  private(set) var threads = 0

  /// Reads `/proc/<pid>/smaps` and the threads' stack pointers; empty when the process is gone.
  init(pid: pid_t) {
    guard let text = Self.contents(of: "/proc/\(pid)/smaps") else { return }
    let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
    let stackPointers = Self.stackPointers(pid)
    threads = stackPointers.count
    var totals: [String: Amount] = [:]
    var order: [String] = []
    func add(_ name: String, _ amount: Amount) {
      if totals[name] == nil { order.append(name) }
      totals[name, default: Amount()] += amount
    }
    var current: (category: String, amount: Amount)?
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard let first = fields.first else { continue }
      if first.contains("-"), fields.count >= 5, !first.hasSuffix(":") {
        if let current { add(current.category, current.amount) }
        let bounds = first.split(separator: "-").compactMap { UInt64($0, radix: 16) }
        let permissions = String(fields[1])
        let path = fields.count > 5 ? fields[5...].joined(separator: " ") : ""
        let holdsStack =
          bounds.count == 2
          && stackPointers.contains { $0 >= bounds[0] && $0 < bounds[1] }
        current = (
          Self.category(
            path: path, permissions: permissions, executable: executable,
            holdsStack: holdsStack), Amount()
        )
        continue
      }
      guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
      switch first {
      case "Rss:": current?.amount.rss = kilobytes
      case "Pss:": current?.amount.pss = kilobytes
      case "Anonymous:": current?.amount.anonymous = kilobytes
      default: break
      }
    }
    if let current { add(current.category, current.amount) }
    let fixed = ["code (text)", "read-only data", "writable data", "heap", "thread stacks"]
    let libraries = order.filter { !fixed.contains($0) && $0 != "other" }
      .sorted { totals[$0]!.rss > totals[$1]!.rss }
    for name in fixed + libraries + ["other"] {
      if let amount = totals[name] { rows.append((name, amount)) }
    }
  }

  /// The whole of a /proc file.
  static func contents(of path: String) -> String? { ProcFile.contents(of: path) }

  /// The category of a mapping.
  static func category(
    path: String, permissions: String, executable: String, holdsStack: Bool
  ) -> String {
    if holdsStack || path == "[stack]" { return "thread stacks" }
    if path == "[heap]" { return "heap" }
    if path == executable && !executable.isEmpty {
      if permissions.contains("x") { return "code (text)" }
      return permissions.contains("w") ? "writable data" : "read-only data"
    }
    if path.hasPrefix("/SYSV") { return "SysV shared memory" }
    if path.hasPrefix("/") {
      return "library " + (path.split(separator: "/").last.map(String.init) ?? path)
    }
    // Anonymous: the executable's .bss and malloc's arenas alike; reserved (---p) parts are
    // not resident.
    if path.isEmpty && permissions.hasPrefix("rw") { return "heap" }
    return "other"
  }

  /// The stack pointers of the threads of `pid` blocked in a system call.
  static func stackPointers(_ pid: pid_t) -> [UInt64] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.compactMap { task in
      guard
        let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)
      else { return nil }
      // "<nr> <6 arguments> <sp> <pc>", hexadecimal after the number.
      let fields = text.split(separator: " ")
      guard fields.count >= 9 else { return nil }
      let pointer = fields[fields.count - 2].trimmingCharacters(in: .whitespacesAndNewlines)
      return UInt64(pointer.hasPrefix("0x") ? String(pointer.dropFirst(2)) : pointer, radix: 16)
    }
  }

  /// A Markdown table of `breakdowns` side by side (`name`, breakdown), in MB.
  static func table(_ breakdowns: [(String, MemoryBreakdown)]) -> String {
    var names: [String] = []
    for (_, breakdown) in breakdowns {
      for row in breakdown.rows where !names.contains(row.name) { names.append(row.name) }
    }
    func megabytes(_ kilobytes: Int) -> String { String(format: "%.2f", Double(kilobytes) / 1024) }
    var lines = [
      "| mapping | "
        + breakdowns.map { "\($0.0) RSS | PSS | anon" }.joined(separator: " | ") + " |",
      "|---|" + String(repeating: "---:|---:|---:|", count: breakdowns.count),
    ]
    for name in names {
      let cells = breakdowns.map { _, breakdown in
        guard let amount = breakdown.rows.first(where: { $0.name == name })?.amount else {
          return "– | – | –"
        }
        return
          "\(megabytes(amount.rss)) | \(megabytes(amount.pss)) | \(megabytes(amount.anonymous))"
      }
      lines.append("| \(name) | " + cells.joined(separator: " | ") + " |")
    }
    let totals = breakdowns.map { _, breakdown in
      var sum = Amount()
      for row in breakdown.rows { sum += row.amount }
      return "**\(megabytes(sum.rss))** | \(megabytes(sum.pss)) | \(megabytes(sum.anonymous))"
    }
    lines.append("| total | " + totals.joined(separator: " | ") + " |")
    let threads = breakdowns.map { "\($0.0) \($0.1.threads)" }.joined(separator: ", ")
    lines.append("\nthreads: \(threads)")
    return lines.joined(separator: "\n")
  }
}
