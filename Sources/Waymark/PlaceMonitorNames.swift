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
  private let bytes: [UInt8]
  /// The offset in `bytes` of the record of place `16 · k` at position `k`.
  private let blockStarts: [UInt32]
  /// Place numbers in ascending id order; empty when that is `0 ..< count` (the ids came in
  /// ascending order).
  private let order: [Int32]
  /// Number of places.
  let count: Int

  /// Records per entry of `blockStarts`.
  private static let blockShift = 4

  /// Packs `records` (id and name of place `i` at position `i`; ids unique).
  init(_ records: [(id: String, name: String)]) {
    var bytes: [UInt8] = []
    var blockStarts: [UInt32] = []
    blockStarts.reserveCapacity(records.count >> PlaceMonitorNames.blockShift + 1)
    // Where each id lies in `bytes`, kept only to sort ids that come out of order.
    var idStarts: [UInt32] = []
    var idLengths: [UInt32] = []
    idStarts.reserveCapacity(records.count)
    idLengths.reserveCapacity(records.count)
    var ascending = true
    for (place, record) in records.enumerated() {
      if place & (1 << PlaceMonitorNames.blockShift - 1) == 0 {
        blockStarts.append(UInt32(bytes.count))
      }
      PlaceMonitorNames.appendLength(record.id.utf8.count, to: &bytes)
      let idStart = bytes.count
      bytes.append(contentsOf: record.id.utf8)
      if ascending, let previous = idStarts.last, let length = idLengths.last {
        ascending = bytes.withUnsafeBufferPointer { buffer in
          PlaceMonitorNames.compare(
            UnsafeBufferPointer(rebasing: buffer[Int(previous)..<Int(previous + length)]),
            UnsafeBufferPointer(rebasing: buffer[idStart...])) < 0
        }
      }
      idStarts.append(UInt32(idStart))
      idLengths.append(UInt32(bytes.count - idStart))
      PlaceMonitorNames.appendLength(record.name.utf8.count, to: &bytes)
      bytes.append(contentsOf: record.name.utf8)
      precondition(bytes.count < Int(UInt32.max), "place ids and names exceed 4 GB")
    }
    self.count = records.count
    if ascending {
      order = []
    } else {
      var order = (0..<Int32(records.count)).map { $0 }
      bytes.withUnsafeBufferPointer { buffer in
        func id(_ place: Int32) -> UnsafeBufferPointer<UInt8> {
          let start = Int(idStarts[Int(place)])
          return UnsafeBufferPointer(
            rebasing: buffer[start..<(start + Int(idLengths[Int(place)]))])
        }
        order.sort { PlaceMonitorNames.compare(id($0), id($1)) < 0 }
      }
      self.order = order
    }
    self.bytes = bytes
    self.blockStarts = blockStarts
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
