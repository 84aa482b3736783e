import Foundation

/// The Markdown files of a source tree: the README, docs/, BENCHMARKS.md, the fixtures' notes.
package enum MarkdownFiles {
  /// The paths, relative to `root` and sorted, of every `*.md` file under it; directories whose
  /// name starts with a dot (`.build`, `.git`, `.swiftpm`) are not entered.
  package static func all(under root: URL) -> [String] {
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
  package static var ofPackage: [String] { all(under: Products.packageRoot) }

  /// A fenced code block (```` ```swift ```` … ```` ``` ````) of a Markdown file.
  package struct CodeBlock: Sendable, Hashable {
    /// The file, as given to ``codeBlocks(in:file:)``.
    package var file: String
    /// The 1-based line of the block's first line of code.
    package var line: Int
    /// The word after the opening fence (`swift`, `sh`, `json`, …), empty when none.
    package var language: String
    /// The lines between the fences, each ending in a newline.
    package var code: String
  }

  /// The fenced code blocks of the Markdown `text` of `file`, in order.
  package static func codeBlocks(in text: String, file: String) -> [CodeBlock] {
    var blocks: [CodeBlock] = []
    var current: CodeBlock?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    {
      if var block = current {
        if line.hasPrefix("```") {
          blocks.append(block)
          current = nil
        } else {
          block.code += line + "\n"
          current = block
        }
      } else if line.hasPrefix("```") {
        let language = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
        current = CodeBlock(file: file, line: index + 2, language: language, code: "")
      }
    }
    return blocks
  }

  /// The fenced code blocks of every Markdown file of this package.
  package static var codeBlocksOfPackage: [CodeBlock] {
    ofPackage.flatMap { file in
      let url = Products.packageRoot.appendingPathComponent(file)
      return codeBlocks(in: (try? String(contentsOf: url, encoding: .utf8)) ?? "", file: file)
    }
  }
}
