import Crypto
import Foundation
import ShortcutSyncDomain

/// A point on the map, in degrees (WGS 84, as Core Location gives it).
public struct PlaceCoordinate: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// The person's place key: what turns where a device is into place tokens (`PlaceToken`) that
/// are equal on all of the person's devices and meaningless to anyone without the key, the
/// service included. It never leaves the person's devices; docs/client-library.md says how an
/// app keeps it in a synchronizable keychain item so that every device of the person has it.
///
/// The map is cut into cells about `cellSize` metres on a side: rows of equal height from pole
/// to pole, each cut into as many equal columns as fit its circumference, so a cell is about as
/// wide as it is tall at every latitude and the columns wrap at the antimeridian. A cell's token
/// is the first 16 bytes of HMAC-SHA256 under the key of "shortcut-sync place 1 ROW COLUMN", in
/// lowercase hex. A donation carries its cell's token; a suggestions request its cell's and the
/// eight around it, so that the edge of a cell still matches.
public struct PlaceKey: Sendable, Hashable {
    /// The cells' side, in metres: a building and its street, not a neighbourhood.
    public static let cellSize = 300.0
    /// Bytes in a key.
    public static let byteCount = 32

    private static let metresPerDegree = 111_320.0
    private static let rowHeight = cellSize / metresPerDegree
    private static let rowCount = Int((180 / rowHeight).rounded(.up))

    /// The key's bytes: what the app stores (and reads back with `init(bytes:)`).
    public let bytes: [UInt8]

    /// A key read back from where the app keeps it; nil unless it is `byteCount` bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    /// A new random key, for the person's first device.
    public static func generate() -> PlaceKey {
        var generator = SystemRandomNumberGenerator()
        return PlaceKey(bytes: (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })!
    }

    /// The token of the cell `coordinate` is in: what a donation made there carries. Nil for a
    /// coordinate that is not one (not finite, or beyond ±90° of latitude).
    public func token(at coordinate: PlaceCoordinate) -> String? {
        guard let row = Self.row(of: coordinate.latitude), coordinate.longitude.isFinite else { return nil }
        return token(row: row, column: Self.column(of: coordinate.longitude, inRow: row))
    }

    /// The tokens a suggestions request at `coordinate` sends: its cell's first, then the cells
    /// around it (the rows above and below it, and the columns either side in each), nine at most
    /// (fewer at a pole, where rows have few columns). Empty for a coordinate that is not one.
    public func tokens(around coordinate: PlaceCoordinate) -> [String] {
        guard let row = Self.row(of: coordinate.latitude), coordinate.longitude.isFinite else { return [] }
        var cells = [Cell(row: row, column: Self.column(of: coordinate.longitude, inRow: row))]
        for nearRow in [row - 1, row, row + 1] where (0..<Self.rowCount).contains(nearRow) {
            let columns = Self.columns(inRow: nearRow)
            let centre = Self.column(of: coordinate.longitude, inRow: nearRow)
            for step in -1...1 {
                let cell = Cell(row: nearRow, column: ((centre + step) % columns + columns) % columns)
                if !cells.contains(cell) { cells.append(cell) }
            }
        }
        return cells.map { token(row: $0.row, column: $0.column) }
    }

    private struct Cell: Hashable {
        var row: Int
        var column: Int
    }

    private func token(row: Int, column: Int) -> String {
        let message = Array("shortcut-sync place 1 \(row) \(column)".utf8)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: bytes))
        return Hex.encode(code.prefix(PlaceToken.length / 2))
    }

    /// The row `latitude` is in, counted from the south pole; nil for one that is not a latitude.
    static func row(of latitude: Double) -> Int? {
        guard latitude.isFinite, (-90...90).contains(latitude) else { return nil }
        return min(Int(((latitude + 90) / rowHeight).rounded(.down)), rowCount - 1)
    }

    /// How many columns a row is cut into: as many cells of `cellSize` as its middle's circle holds.
    static func columns(inRow row: Int) -> Int {
        let middle = -90 + (Double(row) + 0.5) * rowHeight
        return max(1, Int((360 * cos(middle * .pi / 180) / rowHeight).rounded(.down)))
    }

    /// The column `longitude` is in, in `row`, wrapped into −180…180 first.
    static func column(of longitude: Double, inRow row: Int) -> Int {
        let columns = columns(inRow: row)
        var wrapped = (longitude + 180).truncatingRemainder(dividingBy: 360)
        if wrapped < 0 { wrapped += 360 }
        return min(Int((wrapped / 360 * Double(columns)).rounded(.down)), columns - 1)
    }
}
