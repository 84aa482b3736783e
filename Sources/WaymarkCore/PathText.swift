/// Path arithmetic on strings, the way `NSString`'s path methods do it, without Foundation.
public enum PathText {
  /// `directory` and `component` joined by exactly one `/` (`component` alone when `directory`
  /// is empty).
  public static func join(_ directory: String, _ component: String) -> String {
    if directory.isEmpty { return component }
    let head = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    let tail = component.hasPrefix("/") ? String(component.dropFirst()) : component
    return head + "/" + tail
  }

  /// The path without its last component: `/a/b` → `/a`, `/a` → `/`, `b` → `` (empty),
  /// `/` → `/`. Trailing slashes are ignored.
  public static func parent(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "" }
    if slash == trimmed.startIndex { return "/" }
    return String(trimmed[..<slash])
  }
}
