// libFuzzer entry point for the NMEA decoder. Built by Fuzz/run.sh; not part of the package.
import NMEA
import WaymarkCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNMEA(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  // Whole-input decoding, including a split into two chunks at a data-dependent point.
  var decoder = NMEADecoder(path: "fuzz")
  var fixes = 0
  let split = size > 0 ? Int(data[0]) % (size + 1) : 0
  decoder.decode(chunk: UnsafeRawBufferPointer(start: data, count: split)) { _ in fixes += 1 }
  decoder.decode(chunk: UnsafeRawBufferPointer(start: data + split, count: size - split)) {
    fix in
    fixes += 1
    // Every fix must encode to JSON and keep its invariants.
    _ = fix.tpv().closed
    if let coordinate = fix.coordinate, fix.mode.hasPosition {
      precondition(coordinate.latitude.isFinite && coordinate.longitude.isFinite)
    }
  }
  decoder.finish { _ in fixes += 1 }
  let statistics = decoder.statistics
  precondition(statistics.epochs == fixes)
  // A single line parsed on its own must agree with framing.
  let line = String(decoding: UnsafeBufferPointer(start: data, count: min(size, 200)), as: UTF8.self)
  _ = NMEADecoder.parseLine(line)
  return 0
}
