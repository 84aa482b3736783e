import FoundationEssentials

/// Leaflet as installed on the machine that runs `waymark map`, read when the page is made and
/// embedded in it: the script, the style sheet with its images inline (`data:` URLs), and the
/// licence. The repository carries none of it; on Debian it is the package `libjs-leaflet`.
///
/// A directory is usable when it holds `leaflet.min.js` (Debian's build) or `leaflet.js`
/// (upstream's), and `leaflet.css`; `images/*.png` are optional (the page uses no marker
/// image and no layers control).
struct LeafletAssets {
  /// Where Debian's `libjs-leaflet` puts Leaflet.
  static let debianDirectory = "/usr/share/javascript/leaflet"
  /// Debian's copyright file for it (the licence of the files above).
  static let debianCopyright = "/usr/share/doc/libjs-leaflet/copyright"

  /// The script, with any `</script` written `<\/script` so it cannot end the element.
  let script: String
  /// The style sheet, its `url(images/…)` replaced by the images' `data:` URLs.
  let style: String
  /// The licence, for a comment in the page: the copyright and BSD-2-Clause text of Debian's
  /// copyright file, else of a `LICENSE` next to the files, else a line naming the licence.
  let licence: String

  /// Reads Leaflet from `directory`.
  ///
  /// - Returns: `nil` when the directory has no script or no style sheet (not installed).
  init?(directory: String) {
    let base = URL(fileURLWithPath: directory, isDirectory: true)
    func text(_ name: String) -> String? {
      (try? Data(contentsOf: base.appendingPathComponent(name))).map {
        String(decoding: $0, as: UTF8.self)
      }
    }
    guard let script = text("leaflet.min.js") ?? text("leaflet.js"), var style = text("leaflet.css")
    else { return nil }
    self.script = script.replacing("</script", with: "<\\/script")
    for name in ["layers.png", "layers-2x.png", "marker-icon.png", "marker-icon-2x.png"] {
      guard let image = try? Data(contentsOf: base.appendingPathComponent("images/\(name)"))
      else { continue }
      style = style.replacing(
        "url(images/\(name))", with: "url(data:image/png;base64,\(image.base64EncodedString()))")
    }
    self.style = style.replacing("</style", with: "<\\/style")
    let copyright =
      base.standardizedFileURL.path == Self.debianDirectory
      ? (try? Data(contentsOf: URL(fileURLWithPath: Self.debianCopyright))).map {
        Self.debianLicence(String(decoding: $0, as: UTF8.self))
      } : nil
    let upstream = [
      base.appendingPathComponent("LICENSE"),
      base.deletingLastPathComponent().appendingPathComponent("LICENSE"),
    ].lazy.compactMap { try? Data(contentsOf: $0) }.first.map {
      String(decoding: $0, as: UTF8.self)
    }
    licence = Self.commentSafe(
      copyright ?? upstream ?? "Leaflet (https://leafletjs.com), under the BSD-2-Clause licence.")
  }

  /// From a Debian machine-readable copyright file: the paragraph of `Files: *` and the text of
  /// `License: BSD-2-clause`.
  static func debianLicence(_ file: String) -> String {
    let paragraphs = file.split(separator: "\n\n").map(String.init)
    let kept = paragraphs.filter { paragraph in
      paragraph.hasPrefix("Files: *")
        || (paragraph.lowercased().hasPrefix("license: bsd-2-clause\n")
          && paragraph.contains("\n "))
    }
    return kept.joined(separator: "\n\n")
  }

  /// `text` that cannot end an HTML comment: no `--`.
  static func commentSafe(_ text: String) -> String {
    var text = text
    while text.contains("--") { text = text.replacing("--", with: "- -") }
    return text
  }
}
