/// Places the labels of a map one by one so that none overlaps one placed before or runs off
/// the map: beside its marker (right, centred above or below, or left), whichever is free
/// first.
///
/// Text widths are estimated (``characterWidth`` pixels a character at 13 pixels, a little
/// more than DejaVu Sans needs), so a label is never wider than its box.
struct MapLabelLayout {
  /// Where a label goes: its baseline's start, and which part of the text the x is (`start`,
  /// `middle` or `end`, as SVG's `text-anchor`).
  struct Placement: Equatable {
    var x: Double
    var y: Double
    var anchor: String
  }

  /// Map size and the band at the top kept for the title, pixels.
  let width: Double
  let height: Double
  let top: Double
  /// The boxes taken so far: left, top, right, bottom.
  private(set) var taken: [(left: Double, top: Double, right: Double, bottom: Double)] = []

  /// Estimated width of a character, pixels.
  static let characterWidth = 7.5

  init(width: Double, height: Double, top: Double) {
    self.width = width
    self.height = height
    self.top = top
  }

  /// Places a label of `characters` characters beside the marker at (`x`, `y`).
  mutating func place(characters: Int, x: Double, y: Double) -> Placement {
    let length = Self.characterWidth * Double(characters)
    // Right of the marker first, then centred above or below it, then left of it: a label
    // is read as belonging to the marker at its start.
    let candidates = [
      Placement(x: x + 10, y: y - 8, anchor: "start"),
      Placement(x: x + 10, y: y + 20, anchor: "start"),
      Placement(x: x, y: y - 12, anchor: "middle"), Placement(x: x, y: y + 24, anchor: "middle"),
      Placement(x: x - 10, y: y - 8, anchor: "end"), Placement(x: x - 10, y: y + 20, anchor: "end"),
    ]
    func box(_ p: Placement) -> (left: Double, top: Double, right: Double, bottom: Double) {
      let left =
        switch p.anchor {
        case "start": p.x
        case "middle": p.x - length / 2
        default: p.x - length
        }
      return (left, p.y - 13, left + length, p.y + 4)
    }
    func inside(_ b: (left: Double, top: Double, right: Double, bottom: Double)) -> Bool {
      b.left >= 8 && b.right <= width - 8 && b.top >= top && b.bottom <= height - 8
    }
    func free(_ b: (left: Double, top: Double, right: Double, bottom: Double)) -> Bool {
      taken.allSatisfy {
        b.right <= $0.left || b.left >= $0.right || b.bottom <= $0.top || b.top >= $0.bottom
      }
    }
    let chosen =
      candidates.first { inside(box($0)) && free(box($0)) }
      ?? candidates.first { inside(box($0)) } ?? candidates[0]
    taken.append(box(chosen))
    return chosen
  }
}
