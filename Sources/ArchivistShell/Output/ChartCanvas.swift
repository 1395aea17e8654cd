/// A grid of terminal cells to draw lines on: each cell holds 2 × 4 dots as one Unicode braille
/// character (U+2800 to U+28FF), or, in plain mode, one dot as one character, and remembers
/// which series drew in it last (its colour, or its marker).
struct ChartCanvas: Sendable {
    /// The cells across.
    let columns: Int
    /// The cells down.
    let rows: Int
    /// Whether cells are braille characters (2 × 4 dots) rather than one dot each.
    let isBraille: Bool
    /// The dots set in each cell, row after row (braille bits).
    private var dots: [UInt8]
    /// The series that drew last in each cell, -1 for none.
    private var owners: [Int]

    /// An empty canvas.
    init(columns: Int, rows: Int, braille: Bool) {
        self.columns = max(1, columns)
        self.rows = max(1, rows)
        self.isBraille = braille
        dots = [UInt8](repeating: 0, count: self.columns * self.rows)
        owners = [Int](repeating: -1, count: self.columns * self.rows)
    }

    /// The dots across.
    var width: Int { columns * (isBraille ? 2 : 1) }
    /// The dots down.
    var height: Int { rows * (isBraille ? 4 : 1) }

    /// The braille bit of the dot at column `x` (0 or 1) and row `y` (0 to 3) of a cell.
    private static func bit(_ x: Int, _ y: Int) -> UInt8 {
        let left: [UInt8] = [0x01, 0x02, 0x04, 0x40]
        let right: [UInt8] = [0x08, 0x10, 0x20, 0x80]
        return x == 0 ? left[y] : right[y]
    }

    /// Sets the dot at (`x`, `y`), 0 at the top left, for `series`; outside the canvas, nothing.
    mutating func set(x: Int, y: Int, series: Int) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let cell = isBraille ? (y / 4) * columns + x / 2 : y * columns + x
        dots[cell] |= isBraille ? Self.bit(x % 2, y % 4) : 1
        owners[cell] = series
    }

    /// Draws a straight line of dots from one point to another, both included (Bresenham).
    mutating func line(from start: (x: Int, y: Int), to end: (x: Int, y: Int), series: Int) {
        var x = start.x
        var y = start.y
        let dx = abs(end.x - x)
        let dy = -abs(end.y - y)
        let sx = x < end.x ? 1 : -1
        let sy = y < end.y ? 1 : -1
        var error = dx + dy
        while true {
            set(x: x, y: y, series: series)
            if x == end.x && y == end.y { return }
            let doubled = 2 * error
            if doubled >= dy {
                error += dy
                x += sx
            }
            if doubled <= dx {
                error += dx
                y += sy
            }
        }
    }

    /// What cell (`column`, `row`) shows: its braille character (nil in plain mode, where the
    /// caller draws the series' marker) and the series that drew last in it, nil when empty.
    func cell(column: Int, row: Int) -> (character: Character?, series: Int)? {
        let index = row * columns + column
        guard dots[index] != 0 else { return nil }
        let character = isBraille ? Character(Unicode.Scalar(0x2800 + UInt32(dots[index]))!) : nil
        return (character, owners[index])
    }
}
