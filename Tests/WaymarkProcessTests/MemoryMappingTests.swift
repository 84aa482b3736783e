import Testing
import WaymarkProcess

/// Header lines of `/proc/<pid>/maps` and `smaps` read into mappings.
@Suite struct MemoryMappingTests {
  @Test func headerLinesGiveRangePermissionsAndPath() throws {
    let code = try #require(
      MemoryMapping(
        line: "55d0c0a00000-55d0c1a00000 r-xp 00200000 08:01 131 /usr/sbin/waymarkd"))
    #expect(code.start == 0x55d0_c0a0_0000)
    #expect(code.length == 0x100_0000)
    #expect(code.permissions == "r-xp")
    #expect(code.path == "/usr/sbin/waymarkd")
    #expect(code.isFileBacked)
    #expect(!code.isReservation)

    // A path with spaces and the kernel's " (deleted)" is kept whole.
    let deleted = try #require(
      MemoryMapping(line: "1000-3000 r--p 00000000 08:01 7    /tmp/a b/lib.so (deleted)"))
    #expect(deleted.path == "/tmp/a b/lib.so (deleted)")
    #expect(deleted.length == 0x2000)

    let stack = try #require(
      MemoryMapping(line: "7ffc0000-7ffc1000 rw-p 00000000 00:00 0                  [stack]"))
    #expect(stack.path == "[stack]")
    #expect(!stack.isFileBacked)

    let arena = try #require(MemoryMapping(line: "7f0000000000-7f0004000000 ---p 00000000 00:00 0"))
    #expect(arena.path.isEmpty)
    #expect(arena.isReservation)
    #expect(arena.length == 64 << 20)
  }

  @Test func otherLinesAreNotMappings() {
    #expect(MemoryMapping(line: "Anonymous:             0 kB") == nil)
    #expect(MemoryMapping(line: "VmFlags: rd ex mr mw me") == nil)
    #expect(MemoryMapping(line: "") == nil)
    #expect(MemoryMapping(line: "zz-yy r-xp 0 0 0 /bin/x") == nil)
    #expect(MemoryMapping(line: "2000-1000 r-xp 0 0 0 /bin/x") == nil, "the end before the start")
    #expect(MemoryMapping(line: "1000-1000 r-xp 0 0 0 /bin/x") == nil, "an empty range")
    #expect(MemoryMapping(line: "1000-2000 r-xp 0 0") == nil, "four fields")
    #expect(
      MemoryMapping(line: "1000-2000 r-xp 0 0 0 /bin/x") != nil,
      "the control: the same line well formed")
  }

  @Test func aWholeTextGivesItsHeadersInOrder() {
    let smaps = """
      1000-2000 r-xp 00000000 08:01 1 /bin/x
      Size:                  4 kB
      Anonymous:             0 kB
      3000-4000 rw-p 00000000 00:00 0
      Size:                  4 kB

      """
    #expect(MemoryMapping.all(in: smaps).map(\.start) == [0x1000, 0x3000])
    #expect(MemoryMapping.all(in: smaps).map(\.path) == ["/bin/x", ""])
  }
}
