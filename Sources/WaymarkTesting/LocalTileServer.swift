import Foundation
import WaymarkCore

/// A map tile server on the loopback interface for the interactive map's tests: Python's
/// `http.server` answering every GET with the same 256 × 256 green PNG and noting the path.
///
/// It runs through ``CommandRun`` on a thread of its own and ends when ``stop()`` asks it to
/// (or after two minutes, if a test never does).
package final class LocalTileServer: Sendable {
  /// The colour of every tile, red, green and blue.
  package static let colour: (red: UInt8, green: UInt8, blue: UInt8) = (0x40, 0xC0, 0x40)

  /// The port it listens on, on 127.0.0.1.
  package let port: Int
  /// The tile URL template for Leaflet.
  package var template: String { "http://127.0.0.1:\(port)/{z}/{x}/{y}.png" }

  private let stopFile: URL
  private let finished: Locked<CommandRun?>

  private static let script = """
    import http.server, os, struct, sys, time, zlib
    port_file, stop_file = sys.argv[1], sys.argv[2]
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    row = b"\\x00" + bytes([0x40, 0xC0, 0x40]) * 256
    png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(row * 256)) + chunk(b"IEND", b""))
    class Tiles(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            sys.stdout.write(self.path + "\\n")
            sys.stdout.flush()
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(png)))
            self.end_headers()
            self.wfile.write(png)
        def log_message(self, *arguments):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Tiles)
    server.timeout = 0.1
    with open(port_file + ".part", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".part", port_file)
    deadline = time.time() + 120
    while not os.path.exists(stop_file) and time.time() < deadline:
        server.handle_request()
    """

  /// Starts a server; its files go in `directory`.
  ///
  /// - Throws: ``Failure`` when it does not say its port within ten seconds.
  package init(directory: URL) throws {
    let portFile = directory.appendingPathComponent("tile-server.port")
    stopFile = directory.appendingPathComponent("tile-server.stop")
    let finished = Locked<CommandRun?>(nil)
    self.finished = finished
    let arguments = ["-c", Self.script, portFile.path, stopFile.path]
    DetachedThread.start(name: "tile-server") {
      let run =
        (try? CommandRun.run("/usr/bin/python3", arguments, timeout: .seconds(150)))
        ?? CommandRun(status: -1, stdout: Data(), stderr: "python3 could not run")
      finished.withLock { $0 = run }
      finished.signal()
    }
    for _ in 0..<1000 {
      if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) {
        self.port = port
        return
      }
      usleep(10_000)
    }
    try? "".write(to: stopFile, atomically: true, encoding: .utf8)
    throw Failure("the tile server did not start: \(finished.withLock { $0?.stderr ?? "" })")
  }

  /// Stops the server.
  ///
  /// - Returns: the paths it was asked for, in order.
  package func stop() -> [String] {
    try? "".write(to: stopFile, atomically: true, encoding: .utf8)
    let run = finished.withLock(
      waitingUntil: { $0 != nil }, timeoutMilliseconds: 30_000, { $0 })
    return (run?.output ?? "").split(separator: "\n").map(String.init)
  }

  /// Why the server could not start.
  package struct Failure: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
  }
}
