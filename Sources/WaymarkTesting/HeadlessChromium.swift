import Foundation

/// Debian's `chromium` in headless mode: renders a page (SVG or HTML) the way a person would
/// see it, to a PNG screenshot, and prints a page's DOM after its scripts ran.
package enum HeadlessChromium {
  /// The browser, `/usr/bin/chromium` (Debian package `chromium`).
  package static let path = "/usr/bin/chromium"

  /// Whether the browser is installed.
  package static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

  /// The flags of every run: headless, no sandbox (the tests run as root), no GPU, one device
  /// pixel per CSS pixel, a throw-away profile under `directory`.
  private static func flags(profile directory: URL) -> [String] {
    [
      "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
      "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions",
      "--user-data-dir=\(directory.appendingPathComponent("chromium-profile").path)",
    ]
  }

  /// Renders `url` in a window of `width` × `height` pixels to the PNG file `output`.
  ///
  /// - Throws: ``Failure`` when the browser fails or writes no file.
  package static func screenshot(_ url: URL, width: Int, height: Int, to output: URL) throws {
    try? FileManager.default.removeItem(at: output)
    let run = try CommandRun.run(
      path,
      flags(profile: output.deletingLastPathComponent()) + [
        "--window-size=\(width),\(height)", "--screenshot=\(output.path)", url.absoluteString,
      ])
    guard run.status == 0, FileManager.default.fileExists(atPath: output.path) else {
      throw Failure("chromium --screenshot failed (\(run.status)): \(run.stderr.suffix(2000))")
    }
  }

  /// The DOM of `url` after its scripts ran, as HTML.
  package static func dumpDOM(_ url: URL, profile directory: URL) throws -> String {
    let run = try CommandRun.run(
      path, flags(profile: directory) + ["--dump-dom", url.absoluteString])
    guard run.status == 0 else {
      throw Failure("chromium --dump-dom failed (\(run.status)): \(run.stderr.suffix(2000))")
    }
    return run.output
  }

  /// Flags that leave the browser without a network: every host name fails to resolve and
  /// every connection goes to a proxy at 127.0.0.1:9, where nothing listens.
  package static let offline = [
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
  ]

  /// Loads `url` with `extra` flags, gives its scripts and requests `budget` milliseconds of
  /// virtual time, and prints its DOM.
  ///
  /// - Returns: the run: the DOM on standard output; on standard error the browser's log, with
  ///   the page's console messages (`CONSOLE(<line>)`) and uncaught errors.
  /// - Throws: ``Failure`` when the browser fails.
  package static func dumpDOM(
    _ url: URL, profile directory: URL, extra: [String], budget: Int = 5_000
  ) throws -> CommandRun {
    let run = try CommandRun.run(
      path,
      flags(profile: directory) + extra + [
        "--enable-logging=stderr", "--v=0", "--virtual-time-budget=\(budget)",
        "--window-size=1000,700", "--dump-dom", url.absoluteString,
      ])
    guard run.status == 0 else {
      throw Failure("chromium --dump-dom failed (\(run.status)): \(run.stderr.suffix(2000))")
    }
    return run
  }

  /// Why the browser could not render.
  package struct Failure: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
  }
}
