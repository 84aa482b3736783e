import Foundation

/// Debian's `chromium` in headless mode: renders a page (SVG or HTML) the way a person would
/// see it, to a PNG screenshot, and prints a page's DOM after its scripts ran.
public enum HeadlessChromium {
  /// The browser, `/usr/bin/chromium` (Debian package `chromium`).
  public static let path = "/usr/bin/chromium"

  /// Whether the browser is installed.
  public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

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
  public static func screenshot(_ url: URL, width: Int, height: Int, to output: URL) throws {
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
  public static func dumpDOM(_ url: URL, profile directory: URL) throws -> String {
    let run = try CommandRun.run(
      path, flags(profile: directory) + ["--dump-dom", url.absoluteString])
    guard run.status == 0 else {
      throw Failure("chromium --dump-dom failed (\(run.status)): \(run.stderr.suffix(2000))")
    }
    return run.output
  }

  /// Why the browser could not render.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
  }
}
