import Glibc
import Testing
import WaymarkProcess

@testable import WaymarkDaemon

/// waymarkd gives back the code only its start-up ran (and, once a save interval, the code not
/// run since): ``ResidentSet`` drops unwritten file-backed code pages and nothing else.
@Suite(.serialized) struct ResidentSetTests {
  static let smaps = """
    55d0c0a00000-55d0c1a00000 r-xp 00200000 08:01 1234                       /usr/bin/waymark
    Size:              16384 kB
    Rss:                8000 kB
    Anonymous:             0 kB
    55d0c1a00000-55d0c1b00000 r--p 01200000 08:01 1234                       /usr/bin/waymark
    Anonymous:           400 kB
    55d0c1b00000-55d0c1c00000 rw-p 01300000 08:01 1234                       /usr/bin/waymark
    Anonymous:           160 kB
    7f0000000000-7f0000100000 r-xp 00028000 08:01 99                         /usr/lib/x86_64-linux-gnu/libc.so.6
    Anonymous:             0 kB
    7f0000200000-7f0000300000 r-xp 00001000 08:01 98                         /usr/lib/with-text-relocations.so
    Anonymous:             4 kB
    7f0000400000-7f0000401000 r-xp 00000000 00:00 0                          [vdso]
    Anonymous:             0 kB
    7f0000500000-7f0000600000 r-xp 00000000 00:00 0
    Anonymous:             0 kB
    7f0000700000-7f0000800000 r-xp 00000000 08:01 97                         /usr/lib/no-anonymous-line.so
    Rss:                  12 kB
    7f0000900000-7f0000a00000 rw-p 00000000 00:00 0                          [heap]
    Anonymous:             0 kB
    7f0000b00000-7f0000c00000 r-xp 00000000 08:01 96                         /usr/lib/with spaces.so
    Anonymous:             0 kB
    """

  @Test func onlyFileBackedCodeWithoutWrittenPagesIsDropped() {
    let ranges = ResidentSet.codeRanges(smaps: Self.smaps)
    #expect(
      ranges == [
        .init(start: 0x55d0_c0a0_0000, length: 0x100_0000),
        .init(start: 0x7f00_0000_0000, length: 0x10_0000),
        .init(start: 0x7f00_00b0_0000, length: 0x10_0000),
      ])
  }

  @Test func malformedLinesDropNothing() {
    #expect(ResidentSet.codeRanges(smaps: "") == [])
    #expect(ResidentSet.codeRanges(smaps: "zz-yy r-xp 0 0 0 /bin/x\nAnonymous: 0 kB") == [])
    #expect(ResidentSet.codeRanges(smaps: "2000-1000 r-xp 0 0 0 /bin/x\nAnonymous: 0 kB") == [])
    #expect(
      ResidentSet.codeRanges(smaps: "1000-2000 r-xp 0 0 0 /bin/x\nAnonymous: 0 kB")
        == [.init(start: 0x1000, length: 0x1000)], "the control: the same line well formed")
  }

  /// In this very process: the code mappings' resident pages go down, the process goes on
  /// running (its code comes back as it runs), and written memory keeps its contents.
  @Test func trimDropsResidentCodeAndKeepsWrittenMemory() throws {
    let written = (0..<100_000).map { $0 &* 7 }
    let before = try Self.residentCodeKilobytes()
    try #require(before > 0, "the control: this process has resident code")
    let dropped = ResidentSet.trim()
    let after = try Self.residentCodeKilobytes()
    #expect(dropped > 0)
    #expect(after < before, "resident code \(before) kB before, \(after) kB after")
    #expect(written.enumerated().allSatisfy { $0.element == $0.offset &* 7 })
    #expect(ResidentSet.codeRanges(smaps: Self.smaps).count == 3, "code runs after the trim")
  }

  /// The resident kilobytes of the file-backed `r-xp` mappings of this process.
  static func residentCodeKilobytes() throws -> Int {
    let file = try #require(fopen("/proc/self/smaps", "r"))
    defer { fclose(file) }
    var total = 0
    var inCode = false
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, file) > 0, let line {
      let text = String(cString: line)
      let fields = text.split(separator: " ", omittingEmptySubsequences: true)
      if let mapping = MemoryMapping(line: text.split(separator: "\n").first ?? "") {
        inCode = mapping.permissions == "r-xp" && mapping.isFileBacked
      } else if inCode, fields.first == "Rss:", fields.count >= 2, let value = Int(fields[1]) {
        total += value
      }
    }
    return total
  }
}
