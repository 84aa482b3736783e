/// One mapping of a process's address space, as a header line of `/proc/<pid>/maps` (or of
/// `/proc/<pid>/smaps`, whose `Key: value` lines follow each header) describes it:
/// `start-end permissions offset device inode [path]`, the addresses in hexadecimal.
package struct MemoryMapping: Equatable, Sendable {
  /// The mapping's first address.
  package var start: UInt
  /// Its length in bytes.
  package var length: UInt
  /// The four permission letters: read, write, execute, then `p` (private) or `s` (shared);
  /// `r-xp` is code, `---p` reserved address space that allows no access.
  package var permissions: String
  /// The mapped file's absolute path, a kernel name such as `[stack]` or `[heap]`, or empty
  /// for an anonymous mapping.
  package var path: String

  /// Whether a file is mapped (the path is absolute), rather than anonymous memory.
  package var isFileBacked: Bool { path.hasPrefix("/") }

  /// Whether this is anonymous memory reserved with no access at all: a guard page, or the
  /// address space glibc keeps for a malloc arena.
  package var isReservation: Bool { permissions == "---p" && path.isEmpty }

  /// Parses a header line; `nil` for an `smaps` `Key: value` line or anything malformed (an
  /// address that is not hexadecimal, an end not after the start, fewer than five fields).
  package init?(line: Substring) {
    // The path, the sixth field, may itself hold spaces (and " (deleted)"): split five times.
    let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
    guard fields.count >= 5, !fields[0].hasSuffix(":") else { return nil }
    let bounds = fields[0].split(separator: "-")
    guard bounds.count == 2, let start = UInt(bounds[0], radix: 16),
      let end = UInt(bounds[1], radix: 16), end > start
    else { return nil }
    self.start = start
    length = end - start
    permissions = String(fields[1])
    path = fields.count == 6 ? String(fields[5].drop(while: { $0 == " " })) : ""
  }

  /// Every mapping of a `maps` or `smaps` text, in its order.
  package static func all(in maps: String) -> [MemoryMapping] {
    maps.split(separator: "\n").compactMap { MemoryMapping(line: $0) }
  }
}
