import FoundationEssentials
import Glibc
import WaymarkCore

/// Writes a ``MapContent`` as one self-contained SVG element: the place circles to scale, the
/// track, the visits and pass-throughs with their labels, a title, a legend, a scale bar and a
/// north arrow. No network, no fonts or images from elsewhere.
///
/// The output is a function of the content only (fixed number formatting, no clock), so the
/// same store gives byte-identical files. The track is thinned to the pixel
/// (``MapTrackThinner``), so a track of a million points makes a file of the size of its
/// drawing.
struct SVGMapRenderer {
  /// What to draw.
  let content: MapContent
  /// Where: the projection fitted to the content.
  let projection: MapProjection

  /// Fits the projection to the content (the track, and the circles of the visited places).
  ///
  /// - Returns: `nil` when the content is empty.
  init?(_ content: MapContent) {
    let visited = Set(content.stays.map(\.placeID))
    let track = content.segments.lazy.joined().map { (coordinate: $0, padMeters: 0.0) }
    let places =
      content.circles.filter { visited.contains($0.id) }.map {
        (coordinate: $0.coordinate, padMeters: $0.radiusMeters)
      } + content.stays.map { (coordinate: $0.coordinate, padMeters: 0.0) }
    let fitted = [AnySequence(track), AnySequence(places)].joined()
    guard
      let projection = MapProjection(
        fitting: fitted, width: MapStyle.width, minimumHeight: MapStyle.minimumHeight,
        maximumHeight: MapStyle.maximumHeight, margin: MapStyle.margin)
    else { return nil }
    self.content = content
    self.projection = projection
  }

  /// The `<svg>` element; `standalone` adds the XML declaration of an `.svg` file.
  func render(standalone: Bool) -> String {
    let width = projection.width
    let height = projection.height
    var out = standalone ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : ""
    out += """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" \
      viewBox="0 0 \(width) \(height)" font-family="sans-serif" font-size="13">

      """
    out += "<title>\(XMLText.escaped(title))</title>\n"
    out += "<rect width=\"\(width)\" height=\"\(height)\" fill=\"\(MapStyle.background)\"/>\n"
    appendCircles(to: &out)
    appendTrack(to: &out)
    appendStays(to: &out)
    appendFurniture(to: &out)
    out += "</svg>\n"
    return out
  }

  /// The map's title: the track's time range, points and length, and the number of visits.
  var title: String {
    var parts: [String] = []
    if let (first, last) = content.trackTimes {
      parts.append("\(Self.time(first)) to \(Self.time(last))")
      parts.append("\(content.pointCount) track point(s)")
      var meters = 0.0
      for segment in content.segments {
        for (a, b) in zip(segment, segment.dropFirst()) { meters += a.distance(to: b) }
      }
      parts.append(
        meters >= 1000 ? "\((meters / 1000).fixed(1)) km" : "\(Int(saturating: meters)) m")
    }
    parts.append("\(content.stays.count) visit(s)")
    return "waymark map: " + parts.joined(separator: ", ")
  }

  private func number(_ value: Double) -> String { value.fixed(1) }

  /// `2026-11-29T07:50:00Z`: the title's times, to the second.
  private static func time(_ date: Date) -> String {
    String(Timestamp.format(date).prefix(19)) + "Z"
  }

  private func appendCircles(to out: inout String) {
    for circle in content.circles {
      let (x, y) = projection.point(circle.coordinate)
      let radius = max(projection.pixels(circle.radiusMeters), 1)
      out += """
        <circle class="place" data-place="\(XMLText.escaped(circle.id))" \
        data-details="\(XMLText.escaped(details(circle)))" cx="\(number(x))" cy="\(number(y))" \
        r="\(number(radius))" fill="\(MapStyle.placeFill)" stroke="\(MapStyle.placeStroke)" \
        stroke-width="1.5"><title>\(XMLText.escaped(details(circle)))</title></circle>

        """
    }
  }

  /// One path per segment; its lines are subpaths, a dot a subpath of no length (drawn by
  /// the round cap).
  private func appendTrack(to out: inout String) {
    var thinner = MapTrackThinner(width: projection.width, height: projection.height)
    for segment in content.segments {
      let lines = thinner.add(segment.map(projection.point))
      guard !lines.isEmpty else { continue }
      var path = ""
      for line in lines {
        path += path.isEmpty ? "M" : " M"
        path += "\(number(line[0].x)) \(number(line[0].y))"
        if line.count == 1 {
          path += "h0"
          continue
        }
        path += "L"
        path += line.dropFirst().map { "\(number($0.x)) \(number($0.y))" }.joined(separator: " ")
      }
      out += """
        <path class="track" d="\(path)" fill="none" stroke="\(MapStyle.track)" \
        stroke-width="\(number(MapStyle.trackWidth))" stroke-linejoin="round" \
        stroke-linecap="round"/>

        """
    }
  }

  /// The stays of one place (as recorded: its id, whether removed, its centre then).
  struct Group {
    var stays: [MapContent.Stay]
    var first: MapContent.Stay { stays[0] }
  }

  /// The stays grouped by place (as recorded) and kind, in the order of their first arrival.
  var groups: [Group] {
    var order: [String] = []
    var byKey: [String: Group] = [:]
    for stay in content.stays {
      let key = [
        stay.placeID, stay.placeRemoved ? "removed" : "", stay.coordinate.latitude.fixed(7),
        stay.coordinate.longitude.fixed(7), stay.passThrough == nil ? "visit" : "pass",
      ].joined(separator: "\u{0}")
      if byKey[key] == nil {
        order.append(key)
        byKey[key] = Group(stays: [])
      }
      byKey[key]?.stays.append(stay)
    }
    return order.compactMap { byKey[$0] }
  }

  private func appendStays(to out: inout String) {
    var layout = MapLabelLayout(
      width: Double(projection.width), height: Double(projection.height), top: 36)
    for group in groups {
      let first = group.first
      let isPassThrough = first.passThrough != nil
      let about = details(group)
      out += """
        <g class="\(isPassThrough ? "pass-through" : "visit")" \
        data-place="\(XMLText.escaped(first.placeID))" data-details="\(XMLText.escaped(about))">\
        <title>\(XMLText.escaped(about))</title>

        """
      let (x, y) = projection.point(first.coordinate)
      if isPassThrough {
        for stay in group.stays {
          guard let (entry, exit) = stay.passThrough else { continue }
          let a = projection.point(entry)
          let b = projection.point(exit)
          out += """
            <line x1="\(number(a.x))" y1="\(number(a.y))" x2="\(number(b.x))" \
            y2="\(number(b.y))" stroke="\(MapStyle.passThrough)" stroke-width="6" \
            stroke-linecap="round"/>

            """
        }
        out += """
          <path d="M\(number(x)) \(number(y - 6))l6 6l-6 6l-6 -6z" fill="\(MapStyle.passThrough)" \
          stroke="#ffffff" stroke-width="1.5"/>

          """
      } else {
        out += """
          <circle cx="\(number(x))" cy="\(number(y))" r="5" fill="\(MapStyle.visit)" \
          stroke="#ffffff" stroke-width="1.5"/>

          """
      }
      let text = label(group)
      let at = layout.place(characters: text.count, x: x, y: y)
      out += """
        <text x="\(number(at.x))" y="\(number(at.y))" text-anchor="\(at.anchor)" \
        fill="\(MapStyle.text)" stroke="#ffffff" stroke-width="3" stroke-linejoin="round" \
        paint-order="stroke">\
        \(XMLText.escaped(text))</text>
        </g>

        """
    }
  }

  /// The label: the name and the duration(s).
  func label(_ group: Group) -> String {
    var name = group.first.name
    if group.first.placeRemoved { name += " (removed)" }
    let durations = group.stays.map { stay in
      stay.departure.map { VisitsCommand.duration($0.timeIntervalSince(stay.arrival)) }
        ?? "open"
    }
    let kind = group.first.passThrough == nil ? "" : "pass-through "
    if durations.count <= 3 {
      return "\(name) · \(kind)\(durations.joined(separator: ", "))"
    }
    let total = group.stays.compactMap { $0.departure?.timeIntervalSince($0.arrival) }
      .reduce(0, +)
    return "\(name) · \(durations.count) \(kind)visits, \(VisitsCommand.duration(total))"
  }

  private func details(_ circle: MapContent.Circle) -> String {
    var lines = ["\(circle.name) (\(circle.id))"]
    if let category = circle.category { lines.append(category) }
    lines.append("radius \(number(circle.radiusMeters)) m")
    lines.append(
      "\(circle.coordinate.latitude.fixed(6)), \(circle.coordinate.longitude.fixed(6))")
    return lines.joined(separator: "\n")
  }

  private func details(_ group: Group) -> String {
    let first = group.first
    var lines = ["\(first.name) (\(first.placeID))\(first.placeRemoved ? ", removed" : "")"]
    for stay in group.stays {
      var line = first.passThrough == nil ? "visit " : "pass-through "
      line += Timestamp.format(stay.arrival)
      if let departure = stay.departure {
        line += " to \(Timestamp.format(departure))"
        line += " (\(VisitsCommand.duration(departure.timeIntervalSince(stay.arrival))))"
      } else {
        line += ", open"
      }
      lines.append(line)
    }
    return lines.joined(separator: "\n")
  }

  /// The title, legend, scale bar and north arrow.
  private func appendFurniture(to out: inout String) {
    let width = Double(projection.width)
    let height = Double(projection.height)
    out += """
      <text x="16" y="26" font-size="14" fill="\(MapStyle.text)">\(XMLText.escaped(title))</text>

      """
    // Scale bar, bottom left.
    let bar = MapScaleBar(metersPerPixel: projection.metersPerPixel, maximumPixels: width / 4)
    let left = 16.0
    let base = height - 20
    out += """
      <g class="scale-bar" data-meters="\(number(bar.meters))">\
      <path d="M\(number(left)) \(number(base - 8))v8h\(number(bar.pixels))v-8" fill="none" \
      stroke="\(MapStyle.text)" stroke-width="2"/>\
      <text x="\(number(left + bar.pixels / 2))" y="\(number(base - 12))" text-anchor="middle" \
      fill="\(MapStyle.text)">\(bar.label)</text></g>

      """
    // North arrow, top right.
    let x = width - 28
    out += """
      <g class="north-arrow"><path d="M\(number(x)) 18l9 26l-9 -6l-9 6z" fill="\(MapStyle.text)"/>\
      <text x="\(number(x))" y="62" text-anchor="middle" font-weight="bold" \
      fill="\(MapStyle.text)">N</text></g>

      """
    // Legend, bottom right.
    let legendX = width - 150
    let legendY = height - 86
    out += """
      <g class="legend" font-size="12" fill="\(MapStyle.mutedText)">\
      <line x1="\(number(legendX))" y1="\(number(legendY))" x2="\(number(legendX + 24))" \
      y2="\(number(legendY))" stroke="\(MapStyle.track)" stroke-width="3"/>\
      <text x="\(number(legendX + 32))" y="\(number(legendY + 4))">track</text>\
      <circle cx="\(number(legendX + 12))" cy="\(number(legendY + 20))" r="7" \
      fill="\(MapStyle.placeFill)" stroke="\(MapStyle.placeStroke)" stroke-width="1.5"/>\
      <text x="\(number(legendX + 32))" y="\(number(legendY + 24))">place (to scale)</text>\
      <circle cx="\(number(legendX + 12))" cy="\(number(legendY + 40))" r="5" \
      fill="\(MapStyle.visit)"/>\
      <text x="\(number(legendX + 32))" y="\(number(legendY + 44))">visit</text>\
      <line x1="\(number(legendX))" y1="\(number(legendY + 60))" x2="\(number(legendX + 24))" \
      y2="\(number(legendY + 60))" stroke="\(MapStyle.passThrough)" stroke-width="6"/>\
      <text x="\(number(legendX + 32))" y="\(number(legendY + 64))">pass-through</text></g>

      """
  }
}
