import FoundationEssentials
import WaymarkCore

extension PlaceTable {
  /// The number of the snapshot format ``snapshot()`` writes and ``init(snapshot:)`` reads; a
  /// store keys its snapshot by it, so that a Waymark with another format loads from the rows.
  public static let snapshotFormat: Int64 = 1

  /// "WMPLACES" as a little-endian integer, the first 8 bytes of a snapshot.
  private static let snapshotMagic: UInt64 = 0x5345_4341_4C50_4D57
  /// Written in this machine's byte order: another order reads it differently.
  private static let byteOrderMark: UInt32 = 0x0102_0304
  /// Magic, format, byte order mark, payload length, checksum.
  private static let headerSize = 8 + 4 + 4 + 8 + 8

  /// The table with its spatial index as bytes for ``init(snapshot:)``: the packed ids and
  /// names, the detection overrides and the built index (its geometry included), after a
  /// header with a magic number, the format, a byte-order mark, the length and a checksum.
  ///
  /// - Returns: the bytes, or `nil` when the index is not built (``buildIndex()``) or keeps a
  ///   circle's geometry other than the table's (a radius that is not finite): such a table
  ///   is loaded from its rows every time.
  public func snapshot() -> [UInt8]? {
    guard let index, index.count == count else { return nil }
    for place in 0..<count {
      let center = index.center(of: place)
      guard center.latitude.bitPattern == latitudes[place].bitPattern,
        center.longitude.bitPattern == longitudes[place].bitPattern,
        index.radiusMeters(of: place).bitPattern == radii[place].bitPattern
      else { return nil }
    }
    var writer = SnapshotWriter()
    writer.reserve(PlaceTable.headerSize + names.byteCount + index.approximateByteCount + 256)
    writer.write(PlaceTable.snapshotMagic)
    writer.write(UInt32(PlaceTable.snapshotFormat))
    writer.write(PlaceTable.byteOrderMark)
    writer.write(UInt64(0))  // payload length, patched below
    writer.write(UInt64(0))  // checksum, patched below
    writer.write(UInt64(count))
    writer.write(array: names.snapshotBytes)
    writer.write(UInt64(overriddenPlaces.count))
    for (place, detection) in zip(overriddenPlaces, overrides) {
      writer.write(UInt32(place))
      write(detection, to: &writer)
    }
    index.write(to: &writer)
    let payloadLength = writer.bytes.count - PlaceTable.headerSize
    writer.patch(UInt64(payloadLength), at: 16)
    let checksum = writer.bytes.withUnsafeBytes {
      PlaceTable.checksum(UnsafeRawBufferPointer(rebasing: $0[PlaceTable.headerSize...]))
    }
    writer.patch(checksum, at: 24)
    return writer.bytes
  }

  /// The table, with its spatial index, that ``snapshot()`` wrote into `bytes`; `nil` when the
  /// bytes are not such a snapshot of this format and byte order, are truncated or extended,
  /// fail the checksum, or do not make a sound table (every count, offset, length, place
  /// number and cell is checked), whatever they hold.
  public init?(snapshot bytes: UnsafeRawBufferPointer) {
    var reader = SnapshotReader(bytes)
    guard bytes.count >= PlaceTable.headerSize,
      reader.read(UInt64.self) == PlaceTable.snapshotMagic,
      reader.read(UInt32.self) == UInt32(PlaceTable.snapshotFormat),
      reader.read(UInt32.self) == PlaceTable.byteOrderMark,
      reader.read(UInt64.self) == UInt64(bytes.count - PlaceTable.headerSize),
      let checksum = reader.read(UInt64.self),
      checksum
        == PlaceTable.checksum(UnsafeRawBufferPointer(rebasing: bytes[PlaceTable.headerSize...])),
      let count = reader.readCount(limit: min(reader.remaining, Int(Int32.max))),
      let nameBytes = reader.readArray(UInt8.self),
      let names = PlaceMonitorNames(snapshotBytes: nameBytes, count: count),
      let overrideCount = reader.readCount(limit: count)
    else { return nil }
    var overriddenPlaces: [Int32] = []
    var overrides: [PlaceDetectionOverrides] = []
    for _ in 0..<overrideCount {
      guard let place = reader.read(UInt32.self), place < count,
        overriddenPlaces.last.map({ Int32(place) > $0 }) ?? true,
        let detection = PlaceTable.readDetection(&reader)
      else { return nil }
      overriddenPlaces.append(Int32(place))
      overrides.append(detection)
    }
    guard let index = SpatialIndex(snapshot: &reader, count: count), reader.remaining == 0
    else { return nil }
    self.init()
    self.names = names
    self.overriddenPlaces = overriddenPlaces
    self.overrides = overrides
    self.latitudes = (0..<count).map { index.latitudes[$0] }
    self.longitudes = (0..<count).map { index.longitudes[$0] }
    self.radii = (0..<count).map { index.radii[$0] }
    self.index = index
  }

  /// Which overrides are set, one bit each, then every field (0 or empty when unset).
  private func write(_ detection: PlaceDetectionOverrides, to writer: inout SnapshotWriter) {
    var set: UInt8 = 0
    if detection.exitRadiusMeters != nil { set |= 1 }
    if detection.maximumAccuracyMeters != nil { set |= 2 }
    if detection.confirmations != nil { set |= 4 }
    if detection.dwellSeconds != nil { set |= 8 }
    if detection.group != nil { set |= 16 }
    writer.write(set)
    writer.write(detection.exitRadiusMeters ?? 0)
    writer.write(detection.maximumAccuracyMeters ?? 0)
    writer.write(Int64(detection.confirmations ?? 0))
    writer.write(detection.dwellSeconds ?? 0)
    writer.write(array: Array((detection.group ?? "").utf8))
    let overlap = detection.overlap.flatMap { PlaceOverlap.allCases.firstIndex(of: $0) }
    writer.write(UInt8(overlap.map { $0 + 1 } ?? 0))
  }

  /// Overrides as ``write(_:to:)`` wrote them, or `nil` when garbled.
  private static func readDetection(_ reader: inout SnapshotReader) -> PlaceDetectionOverrides? {
    guard let set = reader.read(UInt8.self), set < 32, let exit = reader.readDouble(),
      let accuracy = reader.readDouble(), let confirmations = reader.read(Int64.self),
      let dwell = reader.readDouble(), let group = reader.readArray(UInt8.self),
      let overlapNumber = reader.read(UInt8.self),
      Int(overlapNumber) <= PlaceOverlap.allCases.count
    else { return nil }
    let overlap = overlapNumber == 0 ? nil : PlaceOverlap.allCases[Int(overlapNumber) - 1]
    return PlaceDetectionOverrides(
      exitRadiusMeters: set & 1 != 0 ? exit : nil,
      maximumAccuracyMeters: set & 2 != 0 ? accuracy : nil,
      confirmations: set & 4 != 0 ? Int(confirmations) : nil,
      dwellSeconds: set & 8 != 0 ? dwell : nil,
      group: set & 16 != 0 ? String(decoding: group, as: UTF8.self) : nil, overlap: overlap)
  }

  /// A 64-bit checksum of `bytes` (four multiply–rotate lanes over 8-byte words, then the
  /// tail and the length): catches a flipped, truncated or reordered byte, not a forger.
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    let prime: UInt64 = 0x9E37_79B9_7F4A_7C15
    var lanes: (UInt64, UInt64, UInt64, UInt64) = (1, 2, 3, 4)
    let words = bytes.count / 32 * 4
    var offset = 0
    func mix(_ lane: UInt64, _ word: UInt64) -> UInt64 {
      ((lane ^ word) &* prime).rotated(left: 29)
    }
    while offset < words * 8 {
      lanes.0 = mix(lanes.0, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
      lanes.1 = mix(lanes.1, bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
      lanes.2 = mix(lanes.2, bytes.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
      lanes.3 = mix(lanes.3, bytes.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
      offset += 32
    }
    var hash = mix(mix(mix(lanes.0, lanes.1), lanes.2), lanes.3)
    while offset < bytes.count {
      hash = mix(hash, UInt64(bytes[offset]))
      offset += 1
    }
    return mix(hash, UInt64(bytes.count))
  }
}

extension UInt64 {
  /// The bits rotated left by `count` (0 ..< 64).
  fileprivate func rotated(left count: UInt64) -> UInt64 {
    self << count | self >> (64 - count)
  }
}
