import Foundation

/// Finds the relative links and `#anchor`s of Markdown files that do not resolve: a file that
/// does not exist, a path that leaves the tree, an anchor that matches no heading of its file.
/// External links (`http:`, `https:`, `mailto:` and any other scheme) are not fetched.
///
/// What counts as a link: inline links and images `[text](target)` / `![alt](target "title")`
/// (the text may run over lines), and reference definitions `[label]: target`, outside fenced
/// code blocks and inline code.
/// Anchors are the headings' slugs as GitHub makes them (``slug(_:)``), a repeated slug taking
/// `-1`, `-2`, … in order, plus any `<a id="…">` / `<a name="…">`.
struct MarkdownLinkChecker {
  /// One link that does not resolve.
  struct Problem: Hashable, CustomStringConvertible {
    /// The file, relative to the root.
    var file: String
    /// The 1-based line of the link.
    var line: Int
    /// The link's target as written.
    var target: String
    /// What is wrong.
    var reason: String

    var description: String { "\(file):\(line): (\(target)) \(reason)" }
  }

  /// One link found, for counting.
  struct Link: Hashable {
    var file: String
    var line: Int
    var target: String
  }

  /// The tree the files' relative links are resolved in.
  let root: URL

  /// The slug GitHub gives a heading: its text as rendered (code spans' backticks, emphasis
  /// markers and link syntax gone), lower-cased, every character that is not a letter, a digit,
  /// a space, `-` or `_` dropped, and each space turned into `-`.
  static func slug(_ heading: String) -> String {
    var text = heading
    // [text](url) → text
    text = text.replacingOccurrences(
      of: #"\[([^\]]*)\]\([^)]*\)"#, with: "$1", options: .regularExpression)
    text = text.replacingOccurrences(of: "`", with: "").replacingOccurrences(of: "*", with: "")
    var slug = ""
    for character in text.lowercased() {
      if character == " " {
        slug.append("-")
      } else if character == "-" || character == "_" || character.isLetter || character.isNumber {
        slug.append(character)
      }
    }
    return slug
  }

  /// The anchors of the Markdown text `text`.
  static func anchors(of text: String) -> Set<String> {
    var anchors: Set<String> = []
    var seen: [String: Int] = [:]
    for line in lines(of: text) where !line.inFence {
      let content = line.text
      if let heading = headingText(content) {
        let base = slug(heading)
        let count = seen[base, default: 0]
        seen[base] = count + 1
        anchors.insert(count == 0 ? base : "\(base)-\(count)")
      }
      for (_, groups) in matches(of: #"<a\s+(?:id|name)="([^"]+)""#, in: content) {
        anchors.insert(groups[1])
      }
    }
    return anchors
  }

  /// The links of the Markdown text `text` of `file` (a link's text may run over lines).
  static func links(of text: String, file: String) -> [Link] {
    let visible = visibleText(of: text)
    let lineStarts = visible.utf16.indices.filter { visible.utf16[$0] == 10 }.map {
      visible.utf16.distance(from: visible.utf16.startIndex, to: $0)
    }
    func line(at offset: Int) -> Int {
      var low = 0
      var high = lineStarts.count
      while low < high {
        let middle = (low + high) / 2
        if lineStarts[middle] < offset { low = middle + 1 } else { high = middle }
      }
      return low + 1
    }
    var links: [Link] = []
    let inline = #"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)"#
    let reference = #"^ {0,3}\[[^\]]+\]:[ \t]*<?([^\s>]+)>?"#
    for pattern in [inline, reference] {
      for (offset, groups) in matches(of: pattern, in: visible) {
        links.append(Link(file: file, line: line(at: offset), target: groups[1]))
      }
    }
    return links.sorted { ($0.line, $0.target) < ($1.line, $1.target) }
  }

  /// `text` with what cannot hold a link blanked, line numbers kept: fenced code blocks (their
  /// lines emptied) and inline code spans (`[a](b)` in backticks is an example, not a link).
  static func visibleText(of text: String) -> String {
    lines(of: text).map { line -> String in
      guard !line.inFence else { return "" }
      var result = ""
      var inCode = false
      for character in line.text {
        if character == "`" {
          inCode.toggle()
          result.append(character)
        } else {
          result.append(inCode ? " " : character)
        }
      }
      return result
    }.joined(separator: "\n")
  }

  /// Every link of `files` (paths relative to ``root``) that does not resolve.
  func problems(in files: [String]) throws -> [Problem] {
    var anchorCache: [String: Set<String>] = [:]
    func anchors(_ file: String) throws -> Set<String> {
      if let known = anchorCache[file] { return known }
      let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
      let found = Self.anchors(of: text)
      anchorCache[file] = found
      return found
    }
    var problems: [Problem] = []
    for file in files {
      let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
      for link in Self.links(of: text, file: file) {
        if let problem = try check(link, anchors: anchors) { problems.append(problem) }
      }
    }
    return problems
  }

  /// Every link of `files`.
  func links(in files: [String]) throws -> [Link] {
    try files.flatMap { file in
      Self.links(
        of: try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8), file: file)
    }
  }

  private func check(_ link: Link, anchors: (String) throws -> Set<String>) throws -> Problem? {
    let target = link.target
    func problem(_ reason: String) -> Problem {
      Problem(file: link.file, line: link.line, target: target, reason: reason)
    }
    if target.range(of: #"^[A-Za-z][A-Za-z0-9+.-]*:"#, options: .regularExpression) != nil {
      return nil  // external: not fetched
    }
    if target.isEmpty { return problem("empty link") }
    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
    let rawPath = String(parts[0]).removingPercentEncoding ?? String(parts[0])
    let anchor = parts.count > 1 ? String(parts[1]).removingPercentEncoding : nil
    var resolved = link.file
    if !rawPath.isEmpty {
      if rawPath.hasPrefix("/") { return problem("absolute path: links must be relative") }
      let directory = (link.file as NSString).deletingLastPathComponent
      guard let normalized = Self.normalize(directory.isEmpty ? rawPath : directory + "/" + rawPath)
      else { return problem("leaves the repository") }
      resolved = normalized
      if !resolved.isEmpty,
        !FileManager.default.fileExists(atPath: root.appendingPathComponent(resolved).path)
      {
        return problem("no such file: \(resolved)")
      }
    }
    guard let anchor else { return nil }
    if resolved.hasSuffix(".md") {
      if anchor.isEmpty { return problem("empty anchor") }
      if !(try anchors(resolved)).contains(anchor) {
        return problem("no heading '#\(anchor)' in \(resolved)")
      }
    } else if anchor.range(of: #"^L[0-9]+(-L[0-9]+)?$"#, options: .regularExpression) == nil {
      return problem("an anchor into a file that is not Markdown")
    }
    return nil
  }

  /// `path` with `.` and `..` resolved, or `nil` when it climbs above the root.
  static func normalize(_ path: String) -> String? {
    var components: [Substring] = []
    for component in path.split(separator: "/", omittingEmptySubsequences: true) {
      if component == "." { continue }
      if component == ".." {
        guard components.popLast() != nil else { return nil }
      } else {
        components.append(component)
      }
    }
    return components.joined(separator: "/")
  }

  private struct Line {
    var number: Int
    var text: String
    var inFence: Bool
  }

  /// The lines of `text`, each saying whether it is inside (or delimits) a fenced code block.
  private static func lines(of text: String) -> [Line] {
    var result: [Line] = []
    var fence: String?
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = String(raw)
      let trimmed = line.drop { $0 == " " }
      let marker = trimmed.hasPrefix("```") ? "```" : trimmed.hasPrefix("~~~") ? "~~~" : nil
      if let open = fence {
        result.append(Line(number: index + 1, text: line, inFence: true))
        if marker == open { fence = nil }
      } else if let marker, line.count - trimmed.count <= 3 {
        fence = marker
        result.append(Line(number: index + 1, text: line, inFence: true))
      } else {
        result.append(Line(number: index + 1, text: line, inFence: false))
      }
    }
    return result
  }

  /// The text of an ATX heading (`## Title ##`), or `nil`.
  private static func headingText(_ line: String) -> String? {
    guard let (_, groups) = matches(of: #"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$"#, in: line).first
    else { return nil }
    return groups[1]
  }

  /// The UTF-16 offset and capture groups (group 0 is the whole match) of every match of
  /// `pattern` in `text`; `^` matches at each line's start.
  private static func matches(of pattern: String, in text: String) -> [(Int, [String])] {
    guard let expression = try? NSRegularExpression(pattern: pattern, options: .anchorsMatchLines)
    else { return [] }
    let range = NSRange(text.startIndex..., in: text)
    return expression.matches(in: text, range: range).map { result in
      (
        result.range.location,
        (0..<result.numberOfRanges).map { group in
          Range(result.range(at: group), in: text).map { String(text[$0]) } ?? ""
        }
      )
    }
  }
}
