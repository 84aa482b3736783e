import Glibc
import WaymarkCore
import WaymarkProcess

/// Keeps the daemon's resident set to what it uses: code that only start-up (or a rare event)
/// ran, and the heap's free pages, are given back.
///
/// Starting runs far more code than following a receiver does: the configuration's parser, the
/// store's migrations, the places' snapshot, the listeners, the libraries' own set-up. Every
/// page of code run once stays resident (with the kernel's fault-around, in 64 KiB runs),
/// although the per-fix path uses a small part of it. ``trim()`` unmaps the code pages of the
/// executable and of its libraries from the process (`madvise(2)` `MADV_DONTNEED`: they stay in
/// the page cache, shared with other processes, and a page run again is mapped back by a minor
/// fault, from the same file) and returns the heap's free pages to the kernel (`HeapTrim`,
/// `malloc_trim(3)`). `waymarkd` trims once it is ready and after each periodic save of its
/// state (every `save-interval`, while fixes come), so what stays resident is the code run since
/// the last save; the first fix after a trim maps back the pages it runs.
///
/// Only file-backed code mappings (`r-xp`) without a single written page (`Anonymous: 0 kB` in
/// `/proc/self/smaps`) are dropped: a written private page (a text relocation, a debugger's
/// breakpoint) would come back as the file's bytes, so such a mapping is left alone, as are the
/// writable and relocated data mappings.
package enum ResidentSet {
  /// A code mapping that may be dropped: its address and length in bytes.
  package struct Range: Equatable, Sendable {
    /// The mapping's first address.
    package var start: UInt
    /// Its length in bytes.
    package var length: UInt
  }

  /// The file-backed `r-xp` mappings without anonymous pages in the text of `/proc/self/smaps`
  /// (a mapping whose `Anonymous:` line is missing or unreadable is not one).
  package static func codeRanges(smaps: String) -> [Range] {
    var ranges: [Range] = []
    var candidate: Range?
    for line in smaps.split(separator: "\n") {
      if let mapping = MemoryMapping(line: line) {
        let isFileCode = mapping.permissions == "r-xp" && mapping.isFileBacked
        candidate = isFileCode ? Range(start: mapping.start, length: mapping.length) : nil
      } else if let kept = candidate, line.hasPrefix("Anonymous:") {
        let value = line.dropFirst("Anonymous:".count).split(separator: " ").first
        if value == "0" { ranges.append(kept) }
        candidate = nil
      }
    }
    return ranges
  }

  /// Drops the code pages of the executable and its libraries from the resident set and trims
  /// the heap; returns the bytes of code mappings dropped (their pages come back as they are
  /// used).
  @discardableResult
  package static func trim() -> UInt {
    HeapTrim.release()
    guard let smaps = ProcFile.contents(of: "/proc/self/smaps") else { return 0 }
    var released: UInt = 0
    for range in codeRanges(smaps: smaps) {
      guard let address = UnsafeMutableRawPointer(bitPattern: range.start) else { continue }
      if madvise(address, Int(range.length), MADV_DONTNEED) == 0 { released += range.length }
    }
    return released
  }
}
