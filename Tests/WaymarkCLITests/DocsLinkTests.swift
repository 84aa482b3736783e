import Foundation
import Testing
import WaymarkTesting

/// Every relative link and `#anchor` of every Markdown file of the repository resolves: the
/// file exists inside the repository, the anchor matches a heading (GitHub's slugs). External
/// links are not fetched. The checker is shown to catch a broken link, a broken anchor and a
/// path out of the tree in a file of its own.
@Suite struct DocsLinkTests {
  static let files = MarkdownFiles.ofPackage

  @Test func theMarkdownFilesAreFound() {
    // The walk is not vacuous: the pages the links go between are among what it found.
    for expected in [
      "README.md", "BENCHMARKS.md", "docs/README.md", "docs/protocol.md", "docs/security.md",
      "docs/architecture.md", "docs/reliability.md", "docs/guide/daemon.md",
      "Tests/Fixtures/gpsd/PROVENANCE.md",
    ] {
      #expect(Self.files.contains(expected), "\(expected) not found")
    }
    #expect(!Self.files.contains { $0.hasPrefix(".build/") })
  }

  @Test func everyRelativeLinkAndAnchorResolves() throws {
    let checker = MarkdownLinkChecker(root: Products.packageRoot)
    let links = try checker.links(in: Self.files)
    // Enough links that the check means something (the README alone has dozens).
    #expect(links.count > 100, "only \(links.count) links found")
    #expect(links.contains { $0.target.contains("#") && !$0.target.hasPrefix("#") })
    let problems = try checker.problems(in: Self.files)
    #expect(problems.isEmpty, "\(problems.map(\.description).joined(separator: "\n"))")
  }

  /// The positive control: a file with good and broken links, and only the broken ones reported.
  @Test func brokenLinksAndAnchorsAreReported() throws {
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-links-\(getpid())-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    try FileManager.default.createDirectory(
      at: root.appendingPathComponent("docs"), withIntermediateDirectories: true)
    try """
    # Target

    ## The daemon: `waymarkd`

    ## Notes
    ## Notes
    """.write(to: root.appendingPathComponent("docs/target.md"), atomically: true, encoding: .utf8)
    try """
    # Page

    Good: [t](target.md), [d](target.md#the-daemon-waymarkd), [n](target.md#notes-1),
    [self](#page), [web](https://example.org/nowhere#x), `[code](missing.md)`.
    Broken: [gone](missing.md) and [anchor](target.md#no-such-heading),
    ![picture](../pictures/none.png), [out](../../outside.md) [n2](target.md#notes-2),
    [a link over
    two lines](missing-two.md).

    ```
    [in a fence](missing-too.md)
    ```

    [ref]: nowhere.md
    """.write(to: root.appendingPathComponent("docs/page.md"), atomically: true, encoding: .utf8)
    let checker = MarkdownLinkChecker(root: root)
    let problems = try checker.problems(in: ["docs/page.md", "docs/target.md"])
    #expect(
      problems.map(\.target) == [
        "missing.md", "target.md#no-such-heading", "../../outside.md", "../pictures/none.png",
        "target.md#notes-2", "missing-two.md", "nowhere.md",
      ], "\(problems)")
    #expect(problems.allSatisfy { $0.file == "docs/page.md" })
    #expect(problems.first?.line == 5)
    #expect(problems.first { $0.target == "missing-two.md" }?.line == 7)
    #expect(problems.first { $0.target == "../../outside.md" }?.reason == "leaves the repository")
  }

  @Test func slugsAreGitHubs() {
    #expect(MarkdownLinkChecker.slug("The daemon: `waymarkd`") == "the-daemon-waymarkd")
    #expect(MarkdownLinkChecker.slug("Grant `always`, add places") == "grant-always-add-places")
    #expect(MarkdownLinkChecker.slug("Desktop (GeoClue)") == "desktop-geoclue")
    #expect(MarkdownLinkChecker.slug("Run, status, logs") == "run-status-logs")
    #expect(MarkdownLinkChecker.slug("1. Transport") == "1-transport")
    #expect(
      MarkdownLinkChecker.slug("From RxSwift: a `LocationPermissionManager`")
        == "from-rxswift-a-locationpermissionmanager")
  }

  /// Nothing in the documentation points outside the repository by name.
  @Test func noPageNamesADocumentOutsideTheRepository() throws {
    for file in Self.files {
      let text = try String(
        contentsOf: Products.packageRoot.appendingPathComponent(file), encoding: .utf8)
      for needle in ["../shared", "DESIGN §", "DESIGN.md"] {
        #expect(!text.contains(needle), "\(file) mentions \(needle)")
      }
    }
  }
}
