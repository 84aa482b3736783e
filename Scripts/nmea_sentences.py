"""What Scripts/gpx-to-nmea.py and Scripts/staga-to-nmea.py share: NMEA 0183 sentence framing
and the degrees-and-minutes fields."""


def checksummed(body):
    """`body` framed as a sentence: `$`, the body, `*` and its XOR checksum in hex."""
    total = 0
    for character in body.encode("ascii"):
        total ^= character
    return f"${body}*{total:02X}"


def degrees(value, positive, negative, width, decimals=4):
    """A latitude (width 2) or longitude (width 3) as NMEA's degrees and minutes, and its
    hemisphere letter."""
    hemisphere = positive if value >= 0 else negative
    value = abs(value)
    whole = int(value)
    minutes = (value - whole) * 60
    return f"{whole:0{width}d}{minutes:0{decimals + 3}.{decimals}f}", hemisphere
