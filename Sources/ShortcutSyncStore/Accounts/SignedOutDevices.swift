import Foundation

/// What `PostgresEventStore.signOutDevices` did in its one transaction: the account token's
/// generation after it (a new one when it rotated the token), and the devices it signed out.
public struct SignedOutDevices: Sendable, Hashable {
    /// The generation of the account's token now (0021): the one a rotation gave the new token.
    public var tokenGeneration: Int
    /// The devices signed out, each with its `deviceSignedOut` event, in the order they were made.
    public var devices: [UUID]

    public init(tokenGeneration: Int, devices: [UUID]) {
        self.tokenGeneration = tokenGeneration
        self.devices = devices
    }
}
