import Foundation
import PostgresNIO

/// Reads a row's cells in order, each decoded as its own concrete type: for the fold's hot
/// paths, where decoding a whole row as a tuple costs more than the work done with it.
struct CellReader {
    private var cells: PostgresRow.Iterator

    init(_ row: PostgresRow) {
        cells = row.makeIterator()
    }

    mutating func next<T: PostgresDecodable>(_ type: T.Type) throws -> T {
        guard let cell = cells.next() else { throw StoreError.corruptRow("a row has fewer columns than read") }
        return try cell.decode(type)
    }
}
