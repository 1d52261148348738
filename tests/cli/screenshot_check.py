"""Checks a PNG screenshot is not blank: decodes it (8-bit RGB or RGBA, not
interlaced, as Chromium writes them) with the standard library only and
requires enough non-background pixels and colours, and enough pixels of each
given colour (within 24 per channel, for anti-aliasing): a page whose text
renders but whose plots do not fails on the plots' series colours.

usage: screenshot_check.py SHOT.png MIN_INK_FRACTION [RRGGBB:MIN_FRACTION ...]"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, up_left = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


width, height, channels, rows = pixels(sys.argv[1])
wanted = {bytes.fromhex(spec.split(":")[0]): float(spec.split(":")[1]) for spec in sys.argv[3:]}
ink, colours, found, samples = 0, set(), dict.fromkeys(wanted, 0), 0
for row in rows[::4]:
    for x in range(0, width * channels, channels * 4):
        rgb = row[x:x + 3]
        samples += 1
        colours.add(rgb)
        ink += rgb != b"\xff\xff\xff"
        for colour in wanted:
            found[colour] += all(abs(a - b) <= 24 for a, b in zip(rgb, colour))
fraction = ink / samples
print(f"screenshot {width}x{height}: {fraction:.1%} non-white, {len(colours)} colours; " +
      ", ".join(f"#{c.hex()} {n / samples:.2%}" for c, n in found.items()))
assert fraction >= float(sys.argv[2]), f"blank screenshot: {fraction:.2%} non-white"
assert len(colours) >= 8, f"blank screenshot: {len(colours)} colours"
for colour, least in wanted.items():
    assert found[colour] / samples >= least, f"too little #{colour.hex()}: {found[colour] / samples:.2%} < {least:.2%}"
