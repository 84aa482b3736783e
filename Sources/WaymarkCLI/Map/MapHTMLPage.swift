/// The static HTML page, written when there is no Leaflet (`--leaflet none`, or `libjs-leaflet`
/// not installed; the interactive page is ``MapLeafletPage``): the SVG inline, and a few lines of plain JavaScript that show
/// an element's `data-details` next to the pointer while it hovers a place, a visit or a
/// pass-through. `map.html#<place id>` opens with that place's details shown (its visits',
/// when it has some).
///
/// Self-contained: no external script, style, font or image.
enum MapHTMLPage {
  /// The page around `svg` (an `<svg>` element without an XML declaration).
  static func page(svg: String, title: String) -> String {
    """
    <!DOCTYPE html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <title>\(XMLText.escaped(title))</title>
    <style>
    body { margin: 0; background: \(MapStyle.background); }
    svg { display: block; }
    [data-details] { cursor: default; }
    #details { position: fixed; display: none; max-width: 360px; padding: 6px 8px;
      background: #ffffff; color: \(MapStyle.text); border: 1px solid \(MapStyle.mutedText);
      font: 12px sans-serif; white-space: pre-line; pointer-events: none; }
    </style>
    </head>
    <body>
    \(svg)<div id="details"></div>
    <script>
    (function () {
      var box = document.getElementById("details");
      function show(element, x, y) {
        box.textContent = element.getAttribute("data-details");
        box.style.left = (x + 14) + "px";
        box.style.top = (y + 14) + "px";
        box.style.display = "block";
      }
      var elements = document.querySelectorAll("[data-details]");
      for (var i = 0; i < elements.length; i++) {
        (function (element) {
          element.addEventListener("mousemove", function (event) {
            show(element, event.clientX, event.clientY);
          });
          element.addEventListener("mouseleave", function () { box.style.display = "none"; });
        })(elements[i]);
      }
      // The place's visits when it has some (they come after its circle), else its circle.
      var wanted = decodeURIComponent(location.hash.slice(1)), found = null;
      for (var j = 0; wanted && j < elements.length; j++) {
        if (elements[j].getAttribute("data-place") === wanted) found = elements[j];
      }
      if (found) {
        var r = found.getBoundingClientRect();
        show(found, r.right, r.top);
      }
    })();
    </script>
    </body>
    </html>

    """
  }
}
