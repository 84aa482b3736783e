import FoundationEssentials

/// The ids and names of a monitor's places, packed for a million places: one UTF-8 buffer,
/// one 4-byte offset per place, and one 4-byte entry per place of an id-sorted permutation for
/// lookups by id. About `8 + id bytes + name bytes + 1` bytes a place, where an array of
/// `String`s and a `[String: Int32]` map took about 70.
///
/// Ids are compared by their UTF-8 bytes (so two spellings of "é" are two ids).
struct PlaceMonitorNames: Sendable {
  /// Place `i`'s record is `bytes[starts[i] ..< starts[i + 1]]`: the id's length as a LEB128
  /// number, the id, then the name.
  private let bytes: [UInt8]
  private let starts: [UInt32]
  /// Place numbers in ascending id order.
  private let order: [Int32]

  /// Packs `records` (id and name of place `i` at position `i`; ids unique).
  init(_ records: [(id: String, name: String)]) {
    var bytes: [UInt8] = []
    var starts: [UInt32] = []
    starts.reserveCapacity(records.count + 1)
    for record in records {
      starts.append(UInt32(bytes.count))
      var length = record.id.utf8.count
      repeat {
        let low = UInt8(length & 0x7F)
        length >>= 7
        bytes.append(length == 0 ? low : low | 0x80)
      } while length != 0
      bytes.append(contentsOf: record.id.utf8)
      bytes.append(contentsOf: record.name.utf8)
      precondition(bytes.count < Int(UInt32.max), "place ids and names exceed 4 GB")
    }
    starts.append(UInt32(bytes.count))
    self.bytes = bytes
    self.starts = starts
    var order = (0..<Int32(records.count)).map { $0 }
    let packed = (bytes: bytes, starts: starts)
    order.sort { lhs, rhs in
      PlaceMonitorNames.compare(packed, Int(lhs), Int(rhs)) < 0
    }
    self.order = order
  }

  /// Number of places.
  var count: Int { starts.count - 1 }

  /// Approximate heap bytes.
  var byteCount: Int { bytes.capacity + starts.capacity * 4 + order.capacity * 4 }

  /// The id of place `place`.
  func id(_ place: Int) -> String {
    let range = idRange(place)
    return String(decoding: bytes[range], as: UTF8.self)
  }

  /// The name of place `place`.
  func name(_ place: Int) -> String {
    let range = idRange(place).upperBound..<Int(starts[place + 1])
    return String(decoding: bytes[range], as: UTF8.self)
  }

  /// The number of the place with `id`, or `nil`.
  func number(of id: String) -> Int32? {
    var id = id
    return id.withUTF8 { key -> Int32? in
      var low = 0
      var high = order.count
      while low < high {
        let middle = (low + high) / 2
        let place = Int(order[middle])
        let comparison = bytes.withUnsafeBufferPointer { buffer in
          PlaceMonitorNames.compare(
            UnsafeBufferPointer(rebasing: buffer[idRange(place)]), key)
        }
        if comparison == 0 { return Int32(place) }
        if comparison < 0 { low = middle + 1 } else { high = middle }
      }
      return nil
    }
  }

  private func idRange(_ place: Int) -> Range<Int> {
    PlaceMonitorNames.idRange((bytes, starts), place)
  }

  private static func idRange(_ packed: (bytes: [UInt8], starts: [UInt32]), _ place: Int)
    -> Range<Int>
  {
    var position = Int(packed.starts[place])
    var length = 0
    var shift = 0
    while true {
      let byte = packed.bytes[position]
      position += 1
      length |= Int(byte & 0x7F) << shift
      if byte & 0x80 == 0 { break }
      shift += 7
    }
    return position..<(position + length)
  }

  private static func compare(
    _ packed: (bytes: [UInt8], starts: [UInt32]), _ lhs: Int, _ rhs: Int
  ) -> Int {
    let left = idRange(packed, lhs)
    let right = idRange(packed, rhs)
    return packed.bytes.withUnsafeBufferPointer { buffer in
      compare(
        UnsafeBufferPointer(rebasing: buffer[left]), UnsafeBufferPointer(rebasing: buffer[right]))
    }
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
