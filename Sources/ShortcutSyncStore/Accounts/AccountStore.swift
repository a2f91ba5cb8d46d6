import Foundation
import Logging
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

/// Accounts, devices and the hashes of their tokens.
public struct AccountStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Makes an account, with its head (DESIGN §6: the row its pushes lock).
    public func createAccount(id: UUID = UUID(), tokenHash: [UInt8]) async throws -> UUID {
        // The account and its head (DESIGN §6), in one statement: its pushes lock the head.
        try await client.guardedQuery("""
            WITH account AS (INSERT INTO accounts (account_id, token_hash) VALUES (\(id), \(ByteBuffer(bytes: tokenHash))))
            INSERT INTO account_heads (account_id) VALUES (\(id))
            """, logger: logger)
        return id
    }

    /// Signs a device in, unless the account already has `maximumDevices` signed-in devices
    /// (DESIGN §5): then `PersonLimit.devicesPerAccount` is thrown and nothing is stored. The
    /// account's row is locked first, so concurrent sign-ins count one another, and a rotation of
    /// the account's token (which updates that row) comes wholly before or after: the device
    /// keeps the generation of the account token it was signed in under (`signed_in_with`, 0021),
    /// so that the devices of a leaked token can be found and signed out.
    ///
    /// `signedInWith`, the hash of the account token the request carried: the device is made only
    /// while it is still the account's token, read under that lock, else `AccountTokenReplaced`
    /// (a rotation that committed after the server checked the token, and before this).
    public func createDevice(
        id: UUID = UUID(), account: UUID, name: String, platform: String, tokenHash: [UInt8],
        maximumDevices: Int = Limits.maxDevicesPerAccount, signedInWith accountTokenHash: [UInt8]? = nil
    ) async throws -> UUID {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                let locked = try await connection.guardedQuery("""
                    SELECT (SELECT count(*) FROM devices d WHERE d.account_id = a.account_id AND d.token_hash IS NOT NULL), a.token_generation,
                           a.token_hash
                    FROM accounts a WHERE a.account_id = \(account) FOR UPDATE OF a
                    """, logger: logger).decode((Int64, Int32, ByteBuffer).self).collectAll().first
                if let accountTokenHash, locked.map({ Array(buffer: $0.2) != accountTokenHash }) ?? true {
                    throw AccountTokenReplaced()
                }
                let signedIn = locked?.0 ?? 0, generation = locked?.1
                guard signedIn < maximumDevices else { throw PersonLimit.devicesPerAccount(max: maximumDevices) }
                try await connection.guardedQuery("""
                    INSERT INTO devices (device_id, account_id, name, platform, token_hash, signed_in_with)
                    VALUES (\(id), \(account), \(name), \(platform), \(ByteBuffer(bytes: tokenHash)), \(generation))
                    """, logger: logger)
                return id
            }
        }
    }

    /// Returns once the pool has run a statement: the database serves again.
    ///
    /// Run by the hub while the database comes back, so every wait in it ends when its task is
    /// cancelled (a lease) or its connection closes (`guardedQuery`): an unguarded query on a
    /// connection that died under it can wait forever, and would hold up the service's shutdown.
    public func ping() async throws {
        let logger = logger
        try await SessionLimits.withStatementDeadline(Self.pingDeadline) {
            try await client.withConnection { connection in
                try await connection.guardedQuery("SELECT 1", logger: logger)
            }
        }
    }

    /// How long a ping's `SELECT 1` may go unanswered before its connection is closed: a
    /// server that is back answers in milliseconds, one just restarted in well under a second.
    static let pingDeadline: Duration = .seconds(3)

    /// Pings `count` connections of the pool at once (the most it holds), for when the network
    /// to the database went silent and came back: the connections opened before may never answer
    /// (a black hole leaves them open), and a ping on each closes those that do not answer by its
    /// deadline, so the pool opens new ones. Returns when all answered, or when some answered and
    /// the others were still waiting for a connection after `leaseWait` (the pool lends the rest
    /// to other work); throws when any did not answer, for the caller to try again.
    public func pingEveryConnection(_ count: Int, leaseWait: Duration = .seconds(5)) async throws {
        let logger = logger, client = client, count = max(1, count)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    try await SessionLimits.withStatementDeadline(Self.pingDeadline) {
                        try await client.withConnection { connection in
                            try await connection.guardedQuery("SELECT 1", logger: logger)
                        }
                    }
                    return true
                }
            }
            group.addTask {
                try await Task.sleep(for: leaseWait)
                return false
            }
            var answered = 0
            for try await pinged in group {
                if pinged {
                    answered += 1
                    if answered == count { break }
                } else {
                    guard answered > 0 else { throw PoolDidNotServe(leaseWait: leaseWait) }
                    break
                }
            }
            group.cancelAll()
        }
    }

    /// No connection of the pool answered a ping within `leaseWait`.
    struct PoolDidNotServe: Error, CustomStringConvertible {
        var leaseWait: Duration
        var description: String { "no connection of the pool answered within \(leaseWait)" }
    }

    /// Of the given devices, those still signed in. A cross-account statement (DESIGN §6): a
    /// server asks it for all its open streams at once when its LISTEN connection is back.
    public func signedIn(among devices: [(account: UUID, device: UUID)]) async throws -> Set<UUID> {
        // Guarded, as `ping`: the hub asks this as LISTEN comes back after an outage.
        let logger = logger
        return try await client.withConnection { connection in
            let rows = try await connection.guardedQuery("""
                SELECT d.device_id FROM unnest(\(devices.map(\.account))::uuid[], \(devices.map(\.device))::uuid[]) AS s(account_id, device_id)
                JOIN devices d ON d.account_id = s.account_id AND d.device_id = s.device_id
                WHERE d.token_hash IS NOT NULL
                """, logger: logger)
            return Set(try await rows.decode(UUID.self).collectAll())
        }
    }

    /// Of the given token hashes, those that still open the service: a signed-in device's or an
    /// account's current token. A cross-account statement (DESIGN §6), asked by the hub for the
    /// tokens it keeps when a `LISTEN` comes back (sign-outs, rotations and erasures notified
    /// meanwhile were missed), a chunk of at most 1,000 at a time.
    public func tokensStillValid(among hashes: [[UInt8]]) async throws -> Set<[UInt8]> {
        var valid = Set<[UInt8]>()
        for start in stride(from: 0, to: hashes.count, by: 1_000) {
            let chunk = hashes[start..<min(start + 1_000, hashes.count)].map { ByteBuffer(bytes: $0) }
            let rows = try await client.guardedQuery("""
                SELECT token_hash FROM devices WHERE token_hash = ANY(\(chunk)::bytea[])
                UNION ALL SELECT token_hash FROM accounts WHERE token_hash = ANY(\(chunk)::bytea[])
                """, logger: logger)
            for try await hash in rows.decode(ByteBuffer.self) { valid.insert(Array(hash.readableBytesView)) }
        }
        return valid
    }

    /// Whether `device` of `account` is still signed in (its token not revoked, its account not erased).
    public func isSignedIn(device: UUID, account: UUID) async throws -> Bool {
        try await client.guardedQuery("""
            SELECT EXISTS (SELECT 1 FROM devices WHERE account_id = \(account) AND device_id = \(device) AND token_hash IS NOT NULL)
            """, logger: logger).decode(Bool.self).collectAll().first ?? false
    }

    /// Whether `account` has `device`, signed in or out.
    public func holds(device: UUID, account: UUID) async throws -> Bool {
        try await client.guardedQuery("""
            SELECT EXISTS (SELECT 1 FROM devices WHERE account_id = \(account) AND device_id = \(device))
            """, logger: logger).decode(Bool.self).collectAll().first ?? false
    }

    /// Signs a device out: its token stops working, its push token and what it last pulled
    /// (`device_sync`, issue 56: nothing of it grows with sign-outs but what the log needs) are
    /// dropped, its events stay, and a `DeviceSignedOut`
    /// notification (sent when the statement commits) ends its open streams on every server.
    /// False if the account has no such device.
    ///
    /// The first sign-out's time stays: `least(revoked_at, now())` is `now()` while `revoked_at` is
    /// NULL (least ignores NULLs) and the earlier time after. Not `coalesce(revoked_at, now())`,
    /// which means the same on one PostgreSQL: Citus refuses a STABLE function inside COALESCE or
    /// CASE in an UPDATE of a Citus table (it evaluates `now()` once on the coordinator only where
    /// the function is evaluated unconditionally).
    ///
    /// The account's head is locked `FOR UPDATE` first, in the same transaction: a push-token
    /// registration of the device in flight (which holds it `FOR KEY SHARE`) commits before this
    /// statement reads the push tokens, so that its row goes too (`PushTokenStore.insert`).
    public func revokeDevice(_ device: UUID, account: UUID) async throws -> Bool {
        try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                try await connection.guardedQuery("SELECT 1 FROM account_heads WHERE account_id = \(account) FOR UPDATE", logger: logger).drain()
                return try await revokeDevice(device, account: account, on: connection)
            }
        }
    }

    private func revokeDevice(_ device: UUID, account: UUID, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.guardedQuery("""
            WITH revoked AS (
                UPDATE devices SET token_hash = NULL, revoked_at = least(revoked_at, now())
                WHERE device_id = \(device) AND account_id = \(account)
                RETURNING device_id, account_id
            ), unregistered AS (
                DELETE FROM push_tokens WHERE account_id = \(account) AND device_id = \(device)
            ), unsynced AS (
                DELETE FROM device_sync WHERE account_id = \(account) AND device_id = \(device)
            )
            SELECT device_id, pg_notify(\(DeviceSignedOut.channel),
                json_build_object('accountId', account_id, 'deviceId', device_id)::text)::text
            FROM revoked
            """, logger: logger)
        return try await !rows.decode((UUID, String).self).collectAll().isEmpty
    }

    /// Gives the account a new token (stored as its hash) of the next generation (0021): the old
    /// one stops working, and an `AccountTokenRotated` notification (sent when the statement
    /// commits) makes every server forget it at once. The new token's generation; nil if there is
    /// no such account.
    public func rotateToken(account: UUID, tokenHash: [UInt8]) async throws -> Int? {
        let logger = logger
        return try await client.withConnection { connection in
            try await Self.rotateToken(account: account, tokenHash: tokenHash, on: connection, logger: logger)
        }
    }

    /// `rotateToken` on `connection`, in its transaction if it is in one: the notification is sent
    /// when that commits.
    static func rotateToken(account: UUID, tokenHash: [UInt8], on connection: PostgresConnection, logger: Logger) async throws -> Int? {
        let rows = try await connection.guardedQuery("""
            WITH rotated AS (
                UPDATE accounts SET token_hash = \(ByteBuffer(bytes: tokenHash)), token_generation = token_generation + 1
                WHERE account_id = \(account) RETURNING account_id, token_generation
            )
            SELECT token_generation, pg_notify(\(AccountTokenRotated.channel), json_build_object('accountId', account_id)::text)::text
            FROM rotated
            """, logger: logger)
        return try await rows.decode((Int32, String).self).collectAll().first.map { Int($0.0) }
    }

    /// The account whose token has this hash.
    public func account(tokenHash: [UInt8]) async throws -> UUID? {
        try await client.guardedQuery("SELECT account_id FROM accounts WHERE token_hash = \(ByteBuffer(bytes: tokenHash))", logger: logger)
            .decode(UUID.self).collectAll().first
    }

    /// The signed-in device whose token has this hash, with its account.
    public func device(tokenHash: [UInt8]) async throws -> (device: UUID, account: UUID)? {
        for try await device in try await client.execute(DeviceByToken(tokenHash: ByteBuffer(bytes: tokenHash)), logger: logger) {
            return device
        }
        return nil
    }

    /// Every device request looks its token up: prepared, PostgreSQL plans it once per connection.
    struct DeviceByToken: PostgresPreparedStatement {
        static let name = "DeviceByToken"
        static let sql = "SELECT device_id, account_id FROM devices WHERE token_hash = $1"
        static let bindingDataTypes: [PostgresDataType] = [.bytea]

        var tokenHash: ByteBuffer

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(tokenHash)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> (device: UUID, account: UUID) {
            let (device, account) = try row.decode((UUID, UUID).self)
            return (device, account)
        }
    }
}

extension AccountStore {
    /// The key that signs pull cursors (migration 0004), shared by every server of the database.
    public func cursorSigningKey() async throws -> [UInt8] {
        let rows = try await client.guardedQuery("SELECT secret FROM service_secrets WHERE name = 'cursor_signing'", logger: logger)
        guard let secret = try await rows.decode(ByteBuffer.self).collectAll().first, secret.readableBytes >= 16 else {
            throw StoreError.corruptRow("the cursor signing key is missing; run shortcut-sync migrate")
        }
        return Array(buffer: secret)
    }
}
