import FoundationEssentials
import Glibc
import WaymarkDaemonConfiguration

/// The manual pages, rendered from the very texts that `--help` prints (and, for
/// `waymark.conf(5)`, from the shipped `config/waymark.conf`), so that the two cannot drift:
/// `Tests/WaymarkCLITests/ManPageTests` compares the files in `man/` with a fresh rendering.
///
/// A help text is kept as written, in a no-fill block: its columns and wrapped lines are laid
/// out for an 80-column terminal already, and a reader sees in `man` what `--help` shows.
package enum ManPage {
  /// The pages: file name, and the rendering from the text of `config/waymark.conf` (which only
  /// `waymark.conf(5)` reads).
  package static let pages: [(file: String, render: @Sendable (String) -> String)] = [
    ("waymark.1", { _ in waymark() }),
    ("waymarkd.8", { _ in waymarkd() }),
    ("waymark.conf.5", { configuration in waymarkConf(configuration) }),
  ]

  /// `waymark(1)`: the tool's help and every command's.
  package static func waymark() -> String {
    var page = header(
      "waymark", 1, "CoreLocation-style location services for Linux, on gpsd",
      synopsis: "waymark <command> [options]", description: WaymarkCommandLine.help)
    page += ".SH COMMANDS\n"
    for command in WaymarkCommandLine.commands {
      page += ".SS \(escape("waymark \(command.name)"))\n"
      page += block(command.help)
    }
    page += section(
      "SEE ALSO",
      text:
        "waymarkd(8), waymark.conf(5), gpsd(8); README.md of the package, and the guides in docs/ "
        + "of its source tree (docs/README.md is the index).")
    return page
  }

  /// `waymarkd(8)`: the daemon's help.
  package static func waymarkd() -> String {
    var page = header(
      "waymarkd", 8, "Waymark's place-monitoring daemon and location broker",
      synopsis: "waymarkd [--config <file>]", description: WaymarkDaemon.help)
    page += section("FILES", verbatim: Self.files)
    page += section("SEE ALSO", text: "waymark(1), waymark.conf(5), systemd.service(5), gpsd(8).")
    return page
  }

  /// `waymark.conf(5)`: the shipped configuration file, whose comments document every key.
  ///
  /// - Parameter configuration: the text of `config/waymark.conf`.
  package static func waymarkConf(_ configuration: String) -> String {
    var page = header(
      "waymark.conf", 5, "configuration of waymarkd", synopsis: "/etc/waymark/waymark.conf")
    page += section(
      "DESCRIPTION",
      text: "One \"key = value\" per line. The file below is the one Waymark ships: its comments "
        + "document every key, its default and its errors. An error names the file and the line, "
        + "and waymarkd exits with status 78.")
    page += section("THE SHIPPED FILE", verbatim: configuration)
    page += section("SEE ALSO", text: "waymarkd(8), waymark(1).")
    return page
  }

  private static let files = """
    /etc/waymark/waymark.conf        configuration (waymark.conf(5))
    /var/lib/waymark/waymark.db      the store: places, visits, events, grants, outbox
    /run/waymark/waymark.sock        the location socket (socket = ...)
    /etc/systemd/system/waymarkd.service
    """

  /// What every page opens with: the title line, NAME and SYNOPSIS.
  /// The page's title line, NAME and SYNOPSIS, and its DESCRIPTION when it is a help text
  /// (kept as written).
  private static func header(
    _ name: String, _ number: Int, _ summary: String, synopsis: String,
    description: String? = nil
  ) -> String {
    """
    .\\" Generated from the --help texts by 'waymark docs man'; do not edit.
    .TH \(name.uppercased()) \(number) "" "Waymark" "Waymark Manual"
    .SH NAME
    \(escape(name)) \\- \(escape(summary))

    """ + section("SYNOPSIS", verbatim: synopsis)
      + (description.map { section("DESCRIPTION", verbatim: $0) } ?? "")
  }

  private static func section(_ title: String, verbatim text: String) -> String {
    ".SH \(title)\n" + block(text)
  }

  private static func section(_ title: String, text: String) -> String {
    ".SH \(title)\n\(escape(text))\n"
  }

  /// Text kept line for line (no fill, no adjustment), escaped for roff.
  private static func block(_ text: String) -> String {
    var out = ".nf\n"
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLastIfEmpty() {
      out += line.isEmpty ? ".sp\n" : "\\&" + escape(String(line)) + "\n"
    }
    return out + ".fi\n"
  }

  /// Escapes roff's special characters: the backslash, and `.` or `'` at a line start (which
  /// `\&` in front of every block line already neutralises).
  static func escape(_ text: String) -> String {
    var out = ""
    for character in text {
      switch character {
      case "\\": out += "\\e"
      case "-": out += "\\-"
      default: out.append(character)
      }
    }
    return out
  }
}

extension ArraySlice where Element == Substring {
  fileprivate func dropLastIfEmpty() -> ArraySlice<Substring> {
    last?.isEmpty == true ? dropLast() : self
  }
}

extension Array where Element == Substring {
  fileprivate func dropLastIfEmpty() -> ArraySlice<Substring> {
    self[...].dropLastIfEmpty()
  }
}
