import Foundation

/// The pixels of a PNG file (8-bit RGB or RGBA, not interlaced: what Chromium writes), decoded
/// by Python's `zlib` (`python3`, installed by `Scripts/install-deps.sh`), so that a test can
/// look at a rendered picture.
package struct PNGImage: Sendable {
  /// Width and height, pixels.
  package let width: Int
  package let height: Int
  /// Red, green, blue for each pixel, row by row from the top left.
  private let rgb: [UInt8]

  /// Decodes the PNG file at `url`.
  ///
  /// - Throws: ``Failure`` when the file is not a PNG this reads.
  package init(contentsOf url: URL) throws {
    let run = try CommandRun.run("/usr/bin/python3", ["-c", Self.decoder, url.path])
    guard run.status == 0, let newline = run.stdout.firstIndex(of: 0x0A) else {
      throw Failure("cannot decode \(url.path): \(run.stderr)")
    }
    let header = String(decoding: run.stdout[..<newline], as: UTF8.self).split(separator: " ")
    guard header.count == 2, let width = Int(header[0]), let height = Int(header[1]) else {
      throw Failure("cannot decode \(url.path): header \(header)")
    }
    let pixels = Array(run.stdout[run.stdout.index(after: newline)...])
    guard pixels.count == width * height * 3 else {
      throw Failure("cannot decode \(url.path): \(pixels.count) bytes for \(width)x\(height)")
    }
    self.width = width
    self.height = height
    self.rgb = pixels
  }

  /// The colour at column `x`, row `y` (pixels from the top left), or `nil` outside.
  package func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8)? {
    guard (0..<width).contains(x), (0..<height).contains(y) else { return nil }
    let offset = (y * width + x) * 3
    return (rgb[offset], rgb[offset + 1], rgb[offset + 2])
  }

  /// Why a file could not be decoded.
  package struct Failure: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
  }

  /// Reads the chunks, inflates the IDAT data, undoes the scanline filters (PNG §9) and
  /// prints `<width> <height>\n` and the RGB bytes.
  private static let decoder = #"""
    import struct, sys, zlib
    data = open(sys.argv[1], "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unsupported PNG"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    out = bytearray()
    for row in range(height):
        start = row * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 255
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + predictor) & 255
        previous = line
        out += line if channels == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3)
    sys.stdout.buffer.write(b"%d %d\n" % (width, height))
    sys.stdout.buffer.write(out)
    """#
}
