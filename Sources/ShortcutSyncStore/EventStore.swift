import Foundation
import ShortcutSyncDomain

/// An event as the log holds it.
public struct RecordedEvent: Sendable, Hashable {
    /// Place in the global log.
    public var position: Int64
    /// The appending transaction; with `position` it gives the order in which the log is read.
    public var transactionID: UInt64
    public var accountId: UUID
    /// Place in the account's stream: 1, 2, 3…
    public var streamVersion: Int64
    public var deviceId: UUID
    public var event: Event
    public var recordedAt: Date

    public var accepted: AcceptedEvent { AcceptedEvent(deviceId: deviceId, event: event) }
    public var checkpoint: LogCheckpoint { LogCheckpoint(transactionID: transactionID, position: position) }
}

/// How far a reader of the log has come: the `(transactionID, position)` of the last event it read.
public struct LogCheckpoint: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var transactionID: UInt64
    public var position: Int64

    public init(transactionID: UInt64, position: Int64) {
        self.transactionID = transactionID
        self.position = position
    }

    public static let start = LogCheckpoint(transactionID: 0, position: 0)

    public static func < (lhs: LogCheckpoint, rhs: LogCheckpoint) -> Bool {
        (lhs.transactionID, lhs.position) < (rhs.transactionID, rhs.position)
    }

    public var description: String { "\(transactionID)/\(position)" }
}

/// What an append expects of the account's stream.
public enum ExpectedVersion: Sendable, Hashable {
    /// Whatever the stream holds; concurrent appends to the account are retried.
    case any
    /// The stream must hold exactly this many events (0: none yet).
    case exactly(Int64)
}

/// The outcome of an accepted append.
public struct AppendResult: Sendable, Hashable {
    /// The device's greatest accepted seq after the append.
    public var lastAcceptedSeq: Int64
    /// The greatest log position among the batch's events, new or already stored:
    /// a pull that waits for it sees the whole batch.
    public var position: Int64
    /// How many events were new (the rest were retries of accepted ones).
    public var appended: Int
    /// The account stream's version after the append.
    public var streamVersion: Int64
}

/// Why an append was refused. Nothing of a refused batch is stored.
public enum AppendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The batch does not continue the device's seqs without a gap. `index` is the batch
    /// position of the first event at fault.
    case seqNotContiguous(index: Int, expectedSeq: Int64, lastAcceptedSeq: Int64)
    /// A seq accepted before arrived again with another event id.
    case seqReused(index: Int, seq: Int64, lastAcceptedSeq: Int64)
    /// An event id accepted before arrived again with another seq (or from another device).
    case idReused(index: Int, id: UUID)
    /// The account's stream is not at the version the caller expected.
    case wrongExpectedVersion(expected: Int64, actual: Int64)

    public var description: String {
        switch self {
        case .seqNotContiguous(let index, let expected, let last):
            "event \(index) breaks the device's sequence: expected seq \(expected) (last accepted seq is \(last))"
        case .seqReused(let index, let seq, let last):
            "event \(index) reuses seq \(seq), which was accepted with another id (last accepted seq is \(last))"
        case .idReused(let index, let id):
            "event \(index) reuses id \(id.uuidString.lowercased()), which was accepted with another seq"
        case .wrongExpectedVersion(let expected, let actual):
            "the account's stream is at version \(actual), not \(expected)"
        }
    }
}

/// Failures of the store itself, not of the caller's input.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    case migrationsMissing(String)
    case tooMuchContention(attempts: Int)
    case corruptRow(String)
    case connectionClosed

    public var description: String {
        switch self {
        case .connectionClosed: "the database closed the connection"
        case .migrationsMissing(let why): "the schema migrations cannot be loaded: \(why)"
        case .tooMuchContention(let attempts): "the append lost \(attempts) races in a row for the same account; try again"
        case .corruptRow(let why): "a stored row cannot be read: \(why)"
        }
    }
}

/// The append-only event log.
public protocol EventStore: Sendable {
    /// Appends a device's batch atomically and idempotently (DESIGN §4).
    @discardableResult
    func append(_ events: [Event], account: UUID, device: UUID, expectedVersion: ExpectedVersion) async throws -> AppendResult

    /// Up to `limit` events after `checkpoint`, in log order, never passing an event that a
    /// transaction still running could commit before the ones returned.
    func readLog(after checkpoint: LogCheckpoint, limit: Int) async throws -> [RecordedEvent]

    /// The greatest seq accepted from a device, 0 when none.
    func lastAcceptedSeq(account: UUID, device: UUID) async throws -> Int64

    /// The events of one account in stream order, for replay and admin queries.
    func readStream(account: UUID, after streamVersion: Int64, limit: Int) async throws -> [RecordedEvent]
}

extension EventStore {
    @discardableResult
    public func append(_ events: [Event], account: UUID, device: UUID) async throws -> AppendResult {
        try await append(events, account: account, device: device, expectedVersion: .any)
    }
}
