"""MQTT's framing, for the hostile-input tests and fuzzers that speak MQTT without a library:
a packet is a type byte, a remaining length (a variable-length integer) and a body."""


def varint(value):
    """MQTT's variable-length integer: 7 bits a byte, the high bit set on all but the last."""
    out = bytearray()
    while True:
        byte = value % 128
        value //= 128
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def read_varint(body, offset):
    """The variable-length integer at `offset` of `body`, and the offset after it."""
    value, shift = 0, 0
    while True:
        byte = body[offset]
        offset += 1
        value += (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, offset


def packet(first_byte, body):
    """A packet: its first byte (type and flags), the remaining length, the body."""
    return bytes([first_byte]) + varint(len(body)) + body


def string(text):
    """A UTF-8 string as MQTT writes it: a two-byte length, then the bytes."""
    data = text.encode()
    return len(data).to_bytes(2, "big") + data


def read_exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        data += chunk
    return data


def read_packet(connection):
    """The next packet from a socket: its type (the high four bits) and its body."""
    kind = read_exactly(connection, 1)[0]
    length, shift = 0, 0
    while True:
        byte = read_exactly(connection, 1)[0]
        length += (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    return kind >> 4, read_exactly(connection, length)
