import Foundation

/// The Markdown files of a source tree: the README, docs/, BENCHMARKS.md, the fixtures' notes.
public enum MarkdownFiles {
  /// The paths, relative to `root` and sorted, of every `*.md` file under it; directories whose
  /// name starts with a dot (`.build`, `.git`, `.swiftpm`) are not entered.
  public static func all(under root: URL) -> [String] {
    var found: [String] = []
    var pending = [""]
    while let relative = pending.popLast() {
      let directory = relative.isEmpty ? root : root.appendingPathComponent(relative)
      let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
      for name in names where !name.hasPrefix(".") {
        let path = relative.isEmpty ? name : relative + "/" + name
        var isDirectory: ObjCBool = false
        guard
          FileManager.default.fileExists(
            atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
        else { continue }
        if isDirectory.boolValue {
          pending.append(path)
        } else if name.hasSuffix(".md") {
          found.append(path)
        }
      }
    }
    return found.sorted()
  }

  /// The Markdown files of this package.
  public static var ofPackage: [String] { all(under: Products.packageRoot) }
}
