import Foundation
import Logging
import NIOCore
import PostgresNIO
import ShortcutSyncDomain

extension PostgresEventStore {
    /// Signs out, in one transaction, every signed-in device of `account` — or, with
    /// `signedInWith`, those the account token of that generation signed in — each with its
    /// `deviceSignedOut` event folded as `appendSignOut` folds one; with `rotatingTo`, the account
    /// token is rotated first in the same transaction (a leaked token and the devices made with
    /// it go together, or nothing changes). Nil if there is no such account.
    ///
    /// What `signOut` does for one device in two steps (a failure between them is finished by
    /// doing it again) is one step here: a rotation that keeps its devices signed in half-way
    /// would leave a leaked token's devices working. When the commit goes through, PostgreSQL
    /// sends the notifications: `AccountTokenRotated` and a `DeviceSignedOut` per device, which
    /// make every server forget their tokens and end their streams at once.
    ///
    /// The account's row is locked first (updated by the rotation, else `FOR UPDATE`): a device
    /// being signed in meanwhile (`AccountStore.createDevice` locks it too) is either signed out
    /// here or signed in afterwards under the new token's generation.
    public func signOutDevices(
        account: UUID, signedInWith generation: Int? = nil, rotatingTo tokenHash: [UInt8]? = nil, wallMillis: Int64
    ) async throws -> SignedOutDevices? {
        readCache?.forget(account)
        return try await client.withConnection { connection in
            try await connection.inTransaction(logger: logger) { connection in
                let current: Int?
                if let tokenHash {
                    current = try await AccountStore.rotateToken(account: account, tokenHash: tokenHash, on: connection, logger: logger)
                } else {
                    current = try await connection.guardedQuery(
                        "SELECT token_generation FROM accounts WHERE account_id = \(account) FOR UPDATE",
                        logger: logger).decode(Int32.self).collectAll().first.map(Int.init)
                }
                guard let current else { return nil }
                // As `AccountStore.revokeDevice`: a push-token registration in flight commits
                // before the push tokens are read, and its row goes with the others.
                try await connection.guardedQuery("SELECT 1 FROM account_heads WHERE account_id = \(account) FOR UPDATE",
                                                  logger: logger).drain()
                let devices = try await revokeDevices(of: account, signedInWith: generation, on: connection)
                for device in devices {
                    try await appendSignOut(account: account, device: device, wallMillis: wallMillis, inTransactionOn: connection)
                }
                return SignedOutDevices(tokenGeneration: current, devices: devices)
            }
        }
    }

    /// Revokes the tokens of the account's signed-in devices (those of `generation`'s token when
    /// given) and drops their push tokens and what they last pulled (`device_sync`), as
    /// `AccountStore.revokeDevice` does for one; each
    /// `DeviceSignedOut` is sent when the transaction commits. The devices, oldest first.
    private func revokeDevices(of account: UUID, signedInWith generation: Int?, on connection: PostgresConnection) async throws -> [UUID] {
        // Generations are PostgreSQL integers: a token of one beyond them signed in no device.
        let asked = generation
        let generation = asked.flatMap { Int32(exactly: $0) }
        guard asked == nil || generation != nil else { return [] }
        // least(): see AccountStore.revokeDevice (Citus and now() in an UPDATE).
        let rows = try await connection.guardedQuery("""
            WITH revoked AS (
                UPDATE devices SET token_hash = NULL, revoked_at = least(revoked_at, now())
                WHERE account_id = \(account) AND token_hash IS NOT NULL
                  AND (\(generation)::integer IS NULL OR signed_in_with = \(generation))
                RETURNING device_id, account_id, created_at
            )
            SELECT device_id, pg_notify(\(DeviceSignedOut.channel),
                json_build_object('accountId', account_id, 'deviceId', device_id)::text)::text
            FROM revoked ORDER BY created_at, device_id
            """, logger: logger)
        let devices = try await rows.decode((UUID, String).self).collectAll().map(\.0)
        guard !devices.isEmpty else { return [] }
        // Apart from the UPDATE: push_tokens is distributed on Citus, devices a reference table.
        try await connection.guardedQuery(
            "DELETE FROM push_tokens WHERE account_id = \(account) AND device_id = ANY(\(devices))", logger: logger)
        try await connection.guardedQuery(
            "DELETE FROM device_sync WHERE account_id = \(account) AND device_id = ANY(\(devices))", logger: logger)
        return devices
    }

    /// `appendSignOut` in the caller's transaction: each attempt behind a savepoint, so that a
    /// fold that fails is undone alone and the sign-out is stored unfolded, its account parked,
    /// as `appendSignOut` does in a transaction of its own.
    private func appendSignOut(account: UUID, device: UUID, wallMillis: Int64, inTransactionOn connection: PostgresConnection) async throws {
        let signOut = Event(seq: Limits.seqRange.upperBound, hlc: HLCTimestamp(wallMillis: wallMillis), body: .signedOut)
        var fold = true
        for _ in 0..<maxAttempts {
            let last = try await connection.guardedQuery(
                "SELECT seq FROM events WHERE account_id = \(account) AND device_id = \(device) ORDER BY seq DESC LIMIT 1",
                logger: logger).decode(Int64.self).collectAll().first ?? 0
            guard last < signOut.seq else { return }
            let outcome: AppendOutcome? = try await connection.inSavepoint("sign_out", logger: logger) { connection in
                try await appendAndFold([signOut][...], account: account, device: device, fold: fold, after: last, inTransactionOn: connection)
            } recover: { error in
                guard let failure = error as? FoldFailure, fold else { throw error }
                logger.log(level: .error, "a sign-out could not be folded: it is stored and the account is parked", error: failure.error,
                           metadata: ["account": "\(account)"])
                fold = false
                return nil
            }
            switch outcome {
            case nil, .nothingInserted: continue  // folded no more, or a push of the device came between: look again
            case .noHead: throw AppendError.accountUnknown
            case .appended: return
            }
        }
        throw StoreError.tooMuchContention(attempts: maxAttempts)
    }
}
