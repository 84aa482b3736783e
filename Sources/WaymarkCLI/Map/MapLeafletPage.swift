/// The interactive HTML map: Leaflet (``LeafletAssets``, embedded), the map's data
/// (``MapLeafletData``) and a short plain script that draws it.
///
/// The track, the places, the visits and the pass-throughs are Leaflet vector layers (SVG), so
/// the map is whole without tiles: offline, the tiles fail and the drawing stays on the paper
/// colour, with a note. Each place's visits carry the SVG's label (name and durations). A click on a visit, a pass-through or a place opens its popup (arrival,
/// departure, duration). On zoom the script swaps the track for the level thinned for it.
/// The hash opens the page at something: `#visit=<n>` (the n-th visit by arrival),
/// `#place=<id>` or `#<id>` (a place), `#view=<lat>,<lon>,<zoom>`.
///
/// Self-contained: the only request the page makes is for tiles.
enum MapLeafletPage {
  /// The page for `data`, with `leaflet` inline and `title` as its title.
  static func page(data: MapLeafletData, leaflet: LeafletAssets, title: String) -> String {
    """
    <!DOCTYPE html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>\(XMLText.escaped(title))</title>
    <!--
    Leaflet, embedded from the copy installed where this page was made, under its licence:

    \(leaflet.licence)
    -->
    <style>
    \(leaflet.style)
    </style>
    <style>
    html, body { height: 100%; margin: 0; }
    #map { height: 100%; background: \(MapStyle.background); }
    #note { position: absolute; z-index: 1000; left: 50px; top: 10px; display: none;
      padding: 2px 6px; background: #ffffff; color: \(MapStyle.mutedText); font: 12px sans-serif; }
    body.offline #note { display: block; }
    .waymark-popup div { white-space: nowrap; }
    .leaflet-tooltip.waymark-label { padding: 1px 4px; color: \(MapStyle.text); }
    </style>
    </head>
    <body>
    <div id="map"></div>
    <div id="note">No tiles (offline?): the drawing alone.</div>
    <script type="application/json" id="waymark-data">\(data.json)</script>
    <script>
    \(leaflet.script)
    </script>
    <script>
    \(script)
    </script>
    </body>
    </html>

    """
  }

  /// The page's own script: plain ES5, no library but Leaflet.
  static let script = """
    (function () {
      "use strict";
      var data = JSON.parse(document.getElementById("waymark-data").textContent);
      var map = L.map("map", { zoomSnap: 1, maxZoom: 19 });
      var waymark = { map: map, track: null, level: null, places: {}, visits: {} };
      window.waymark = waymark;
      L.control.scale({ imperial: false }).addTo(map);
      if (data.tiles) {
        var tiles = L.tileLayer(data.tiles, { attribution: data.attribution, maxZoom: 19 });
        tiles.on("tileerror", function () { document.body.className = "offline"; });
        tiles.addTo(map);
      }
      function popup(lines) {
        var box = document.createElement("div");
        box.className = "waymark-popup";
        for (var i = 0; i < lines.length; i++) {
          var line = document.createElement(i === 0 ? "b" : "div");
          line.textContent = lines[i];
          box.appendChild(line);
        }
        return box;
      }
      // A line: millionths of a degree, the first point and then differences.
      function decode(line) {
        var points = [], lat = 0, lon = 0;
        for (var i = 0; i + 1 < line.length; i += 2) {
          lat += line[i];
          lon += line[i + 1];
          points.push([lat / 1e6, lon / 1e6]);
        }
        return points;
      }
      var levels = data.levels.map(function (level) {
        return { zoom: level.zoom, lines: level.lines.map(decode) };
      });
      // The first level thinned for this zoom or a closer one.
      function drawTrack() {
        var chosen = levels[levels.length - 1];
        for (var i = 0; i < levels.length; i++) {
          if (levels[i].zoom >= map.getZoom()) { chosen = levels[i]; break; }
        }
        if (chosen === waymark.level || !chosen) { return; }
        if (waymark.track) { map.removeLayer(waymark.track); }
        waymark.level = chosen;
        waymark.track = L.polyline(chosen.lines, { className: "waymark-track",
          color: "\(MapStyle.track)", weight: \(MapStyle.trackWidth), interactive: false });
        waymark.track.addTo(map);
        document.body.setAttribute("data-level", chosen.zoom);
      }
      data.places.forEach(function (place) {
        waymark.places[place.id] = L.circle([place.lat, place.lon], { radius: place.radius,
          className: "waymark-place", color: "\(MapStyle.placeStroke)", weight: 1.5,
          fillColor: "\(MapStyle.placeFill)", fillOpacity: 0.6 })
          .bindPopup(popup(place.lines)).addTo(map);
      });
      map.fitBounds(data.bounds);
      drawTrack();
      map.on("zoomend", drawTrack);
      data.stays.forEach(function (stay) {
        var layer = stay.chord
          ? L.polyline(stay.chord, { className: "waymark-pass", color: "\(MapStyle.passThrough)",
            weight: 6 })
          : L.circleMarker([stay.lat, stay.lon], { className: "waymark-visit", radius: 6,
            color: "#ffffff", weight: 1.5, fillColor: "\(MapStyle.visit)", fillOpacity: 1 });
        waymark.visits[stay.number] = layer.bindPopup(popup(stay.lines)).addTo(map);
      });
      data.labels.forEach(function (label) {
        waymark.visits[label.number].bindTooltip(label.text, { permanent: true,
          direction: label.side, offset: label.side === "top" ? [0, -6] : [6, 0],
          className: "waymark-label" });
      });
      function openFromHash() {
        var hash = decodeURIComponent(location.hash.slice(1)), match;
        if ((match = /^visit=(\\d+)$/.exec(hash)) && waymark.visits[match[1]]) {
          waymark.visits[match[1]].openPopup();
        } else if ((match = /^view=(-?[\\d.]+),(-?[\\d.]+),(\\d+)$/.exec(hash))) {
          map.setView([+match[1], +match[2]], +match[3], { animate: false });
        } else {
          var id = hash.replace(/^place=/, "");
          if (Object.prototype.hasOwnProperty.call(waymark.places, id)) {
            waymark.places[id].openPopup();
          }
        }
      }
      window.addEventListener("hashchange", openFromHash);
      openFromHash();
    })();
    """
}
