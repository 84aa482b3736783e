import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

extension VisitsCommand {
  /// `waymark visits delete`: deletes the selected closed visits and their events.
  static func delete(
    placeID: String?, removedOnly: Bool, before: Date?, store: String
  ) throws -> ExitCode {
    guard placeID != nil || removedOnly || before != nil else {
      throw CommandError.usage(
        "'visits delete' needs '--place <id>', '--removed' or '--before <time>' (or several).")
    }
    let database = try StorePath.open(store, create: false)
    let deletion = try database.write {
      try VisitRepository($0).delete(
        placeID: placeID, removedOnly: removedOnly, arrivingBefore: before)
    }
    var selection: [String] = []
    if let placeID { selection.append("place '\(placeID)'") }
    if removedOnly { selection.append("removed places only") }
    if let before { selection.append("arriving before \(Timestamp.format(before))") }
    var text = "Deleted \(deletion.visits) visit(s) and \(deletion.events) event(s) ("
    text += selection.joined(separator: ", ") + ") from \(store)"
    if deletion.openVisitsKept > 0 { text += "; kept \(deletion.openVisitsKept) open visit(s)" }
    OutputSink.standardError.line(text + ".")
    return .ok
  }
}
