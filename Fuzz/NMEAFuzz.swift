// libFuzzer entry point for the NMEA framer, decoder and fix assembler. Built by Fuzz/run.sh;
// not part of the package. Each input is checked, not only run:
// - chunking does not matter: the input decoded whole and decoded in two chunks split at a
//   data-dependent point give the same fixes (byte-identical TPV lines) and the same statistics;
// - every fix keeps its invariants (finite coordinates in range when it has a position, a
//   TPV line that ends with `}`);
// - `parseLine` (the single-line path of `waymark places`, tests and tools) agrees with the
//   decoder on the input's first line: both accept it, or both reject it for the same reason.
import NMEA
import WaymarkCore

private func decode(_ data: UnsafePointer<UInt8>, _ size: Int, split: Int) -> (
  [UInt8], NMEAStatistics
) {
  var decoder = NMEADecoder(path: "fuzz")
  var output: [UInt8] = []
  let emit = { (fix: Fix) in
    if let coordinate = fix.coordinate, fix.mode.hasPosition {
      precondition(coordinate.latitude.isFinite && coordinate.longitude.isFinite)
      precondition(abs(coordinate.latitude) <= 90 && abs(coordinate.longitude) <= 180)
    }
    let start = output.count
    fix.appendTPV(to: &output)
    precondition(output.count > start && output[output.count - 2] == UInt8(ascii: "}"))
  }
  decoder.decode(chunk: UnsafeRawBufferPointer(start: data, count: split), emit: emit)
  decoder.decode(
    chunk: UnsafeRawBufferPointer(start: data + split, count: size - split), emit: emit)
  decoder.finish(emit: emit)
  return (output, decoder.statistics)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNMEA(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let split = size > 0 ? Int(data[0]) % (size + 1) : 0
  let (whole, wholeStatistics) = decode(data, size, split: size)
  let (chunked, chunkedStatistics) = decode(data, size, split: split)
  precondition(whole == chunked, "chunking changed the fixes")
  precondition(wholeStatistics == chunkedStatistics, "chunking changed the statistics")
  precondition(wholeStatistics.epochs == whole.filter { $0 == 0x0A }.count)

  // The first line through parseLine and through the decoder alone.
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let end = bytes.firstIndex(of: 0x0A) ?? size
  var first = Array(bytes[..<end])
  if first.last == 0x0D { first.removeLast() }
  // parseLine takes a String: only lines that survive UTF-8 decoding unchanged compare.
  guard !first.contains(0x0D), String(decoding: first, as: UTF8.self).utf8.elementsEqual(first)
  else { return 0 }
  let parsed = NMEADecoder.parseLine(String(decoding: first, as: UTF8.self))
  var single = NMEADecoder(path: "fuzz-line")
  first.append(0x0A)
  first.withUnsafeBytes { single.decode(chunk: $0) { _ in } }
  single.finish { _ in }
  let counts = single.statistics.badLines
  precondition(
    parsed.hasMalformedField == ((counts[.malformedField] ?? 0) > 0),
    "parseLine and the decoder disagree on a malformed field")
  let rejected = counts.filter { $0.value > 0 && $0.key != .malformedField }.map(\.key)
  if let kind = parsed.badLine {
    precondition(rejected == [kind], "parseLine says \(kind), the decoder \(rejected)")
  } else {
    precondition(rejected.isEmpty, "parseLine accepts a line the decoder rejects: \(rejected)")
  }
  return 0
}
