import FoundationEssentials

/// The ids and names of a monitor's places, packed for a million places: one UTF-8 buffer with
/// each record's lengths, the buffer offset of every sixteenth record, and — only when the
/// places do not come in ascending id order — one 4-byte entry per place of an id-sorted
/// permutation for lookups by id. About `id bytes + name bytes + 2.25` bytes a place when the
/// places come ordered by id (as the store loads them), 4 more otherwise, where an array of
/// `String`s and a `[String: Int32]` map took about 70.
///
/// Ids are compared by their UTF-8 bytes (so two spellings of "é" are two ids; the store's
/// `ORDER BY id` uses the same order).
struct PlaceMonitorNames: Sendable {
  /// Place `i`'s record: the id's length as a LEB128 number, the id, the name's length
  /// likewise, the name. Records follow each other in place order.
  private var bytes: [UInt8] = []
  /// The offset in `bytes` of the record of place `16 · k` at position `k`.
  private var blockStarts: [UInt32] = []
  /// Place numbers in ascending id order; empty when that is `0 ..< count` (the ids came in
  /// ascending order).
  private var order: [Int32] = []
  /// Number of places.
  private(set) var count = 0
  /// Whether every id so far came after the one before it, by bytes.
  private(set) var isAscending = true
  /// Where the last id lies in `bytes`, to compare the next one with it.
  private var lastID: Range<Int> = 0..<0

  /// Records per entry of `blockStarts`.
  private static let blockShift = 4

  /// No places yet; ``append(id:name:)`` adds them, ``sealed()`` makes the lookup by id.
  init() {}

  /// Packs `records` (id and name of place `i` at position `i`; ids unique).
  init(_ records: [(id: String, name: String)]) {
    for record in records {
      var id = record.id
      var name = record.name
      id.withUTF8 { id in name.withUTF8 { append(id: id, name: $0) } }
    }
    self = sealed()
  }

  /// The names kept in a snapshot: `count` records filling `bytes` exactly, sealed (the
  /// lookup permutation is made again when the ids do not ascend); `nil` when a length runs
  /// past the end or the records do not end where `bytes` does.
  init?(snapshotBytes bytes: [UInt8], count: Int) {
    var blockStarts: [UInt32] = []
    blockStarts.reserveCapacity(count >> PlaceMonitorNames.blockShift + 1)
    var isAscending = true
    var lastID: Range<Int> = 0..<0
    let valid = bytes.withUnsafeBufferPointer { buffer -> Bool in
      var position = 0
      // The next length, or nil when it or what it counts runs past the end.
      func length() -> Int? {
        var length = 0
        var shift = 0
        while position < buffer.count, shift <= 28 {
          let byte = buffer[position]
          position += 1
          length |= Int(byte & 0x7F) << shift
          if byte & 0x80 == 0 { return length <= buffer.count - position ? length : nil }
          shift += 7
        }
        return nil
      }
      for place in 0..<count {
        if place & (1 << PlaceMonitorNames.blockShift - 1) == 0 {
          blockStarts.append(UInt32(truncatingIfNeeded: position))
        }
        guard let idLength = length() else { return false }
        let id = position..<(position + idLength)
        position = id.upperBound
        if isAscending && place > 0 {
          isAscending =
            PlaceMonitorNames.compare(
              UnsafeBufferPointer(rebasing: buffer[lastID]),
              UnsafeBufferPointer(rebasing: buffer[id])) < 0
        }
        lastID = id
        guard let nameLength = length() else { return false }
        position += nameLength
      }
      return position == buffer.count
    }
    guard valid, bytes.count < Int(UInt32.max) else { return nil }
    self.bytes = bytes
    self.blockStarts = blockStarts
    self.count = count
    self.isAscending = isAscending
    self.lastID = lastID
    self = sealed()
  }

  /// Every record, in place order, as a snapshot keeps them (see ``init(snapshotBytes:count:)``).
  var snapshotBytes: [UInt8] { bytes }

  /// Reserves room for about `count` places of `bytesPerPlace` bytes of id and name.
  mutating func reserve(_ count: Int, bytesPerPlace: Int) {
    bytes.reserveCapacity(count * (bytesPerPlace + 2))
    blockStarts.reserveCapacity(count >> PlaceMonitorNames.blockShift + 1)
  }

  /// Appends place number `count` (its id must differ from every earlier one).
  mutating func append(id: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>) {
    if count & (1 << PlaceMonitorNames.blockShift - 1) == 0 {
      blockStarts.append(UInt32(bytes.count))
    }
    PlaceMonitorNames.appendLength(id.count, to: &bytes)
    let idStart = bytes.count
    bytes.append(contentsOf: id)
    if isAscending && count > 0 {
      let previous = lastID
      isAscending = bytes.withUnsafeBufferPointer { buffer in
        PlaceMonitorNames.compare(
          UnsafeBufferPointer(rebasing: buffer[previous]),
          UnsafeBufferPointer(rebasing: buffer[idStart...])) < 0
      }
    }
    lastID = idStart..<bytes.count
    PlaceMonitorNames.appendLength(name.count, to: &bytes)
    bytes.append(contentsOf: name)
    precondition(bytes.count < Int(UInt32.max), "place ids and names exceed 4 GB")
    count += 1
  }

  /// The same places with their lookup by id: the id-sorted permutation when the ids did not
  /// come in ascending order, and no spare capacity.
  func sealed() -> PlaceMonitorNames {
    var result = self
    result.bytes = bytes.withUnsafeBufferPointer { Array($0) }
    result.blockStarts = blockStarts.withUnsafeBufferPointer { Array($0) }
    guard !isAscending else { return result }
    var order = (0..<Int32(count)).map { $0 }
    let ranges = (0..<count).map { record($0).id }
    bytes.withUnsafeBufferPointer { buffer in
      order.sort {
        PlaceMonitorNames.compare(
          UnsafeBufferPointer(rebasing: buffer[ranges[Int($0)]]),
          UnsafeBufferPointer(rebasing: buffer[ranges[Int($1)]])) < 0
      }
    }
    result.order = order
    return result
  }

  /// Whether `id` comes after the last id appended, by bytes (so it is new while the ids
  /// are ascending); `true` when there is none.
  func follows(_ id: UnsafeBufferPointer<UInt8>) -> Bool {
    guard count > 0 else { return true }
    let last = lastID
    return bytes.withUnsafeBufferPointer { buffer in
      PlaceMonitorNames.compare(UnsafeBufferPointer(rebasing: buffer[last]), id) < 0
    }
  }

  /// Approximate heap bytes.
  var byteCount: Int { bytes.capacity + blockStarts.capacity * 4 + order.capacity * 4 }

  /// The id of place `place`.
  func id(_ place: Int) -> String {
    String(decoding: bytes[record(place).id], as: UTF8.self)
  }

  /// The name of place `place`.
  func name(_ place: Int) -> String {
    String(decoding: bytes[record(place).name], as: UTF8.self)
  }

  /// The number of the place with `id`, or `nil`.
  func number(of id: String) -> Int32? {
    var id = id
    return id.withUTF8 { key -> Int32? in
      var low = 0
      var high = count
      while low < high {
        let middle = (low + high) / 2
        let place = order.isEmpty ? middle : Int(order[middle])
        let range = record(place).id
        let comparison = bytes.withUnsafeBufferPointer { buffer in
          PlaceMonitorNames.compare(UnsafeBufferPointer(rebasing: buffer[range]), key)
        }
        if comparison == 0 { return Int32(place) }
        if comparison < 0 { low = middle + 1 } else { high = middle }
      }
      return nil
    }
  }

  /// The byte ranges of place `place`'s id and name: from the start of its block of sixteen,
  /// past the records before it.
  private func record(_ place: Int) -> (id: Range<Int>, name: Range<Int>) {
    var position = Int(blockStarts[place >> PlaceMonitorNames.blockShift])
    var skipped = place & (1 << PlaceMonitorNames.blockShift - 1)
    while true {
      let idLength = readLength(&position)
      let id = position..<(position + idLength)
      position = id.upperBound
      let nameLength = readLength(&position)
      if skipped == 0 { return (id, position..<(position + nameLength)) }
      position += nameLength
      skipped -= 1
    }
  }

  private func readLength(_ position: inout Int) -> Int {
    var length = 0
    var shift = 0
    while true {
      let byte = bytes[position]
      position += 1
      length |= Int(byte & 0x7F) << shift
      if byte & 0x80 == 0 { return length }
      shift += 7
    }
  }

  private static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
    var length = length
    repeat {
      let low = UInt8(length & 0x7F)
      length >>= 7
      bytes.append(length == 0 ? low : low | 0x80)
    } while length != 0
  }

  /// Lexicographic comparison of two byte strings: negative, zero or positive.
  private static func compare(
    _ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>
  ) -> Int {
    let common = min(lhs.count, rhs.count)
    for index in 0..<common where lhs[index] != rhs[index] {
      return Int(lhs[index]) - Int(rhs[index])
    }
    return lhs.count - rhs.count
  }
}
